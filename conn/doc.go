// Package conn is the rest of a game's connection around package
// replicate's state stream: input commands from each client with
// redundancy, reliable ordered messages both ways, and the packets that
// carry them beside the state, one datagram each way a tick.
//
// The client's end (Client) wraps a replicate.Client: each tick the game
// pushes its player's input to an InputSender (stamped with the server
// tick it is for: interp.Clock.ServerTick), and Client.Append writes the
// client's packet: the state's ack, the newest Redundancy inputs the
// server has not played (3 by default; each older one a delta against the
// next newer, Codec.EncodeDelta), and the Channel's messages due.
// Client.Receive applies the server's packet: the newest input tick the
// server played, its messages, and the state.
//
// The server's end (Server) wraps a replicate.Peer: Server.Receive hands
// the client's inputs to an InputQueue, which plays one a tick (Next)
// behind a small jitter buffer, repeating the last input when a tick's is
// missing and counting it, and acknowledges what it played; its messages
// go to the Channel and its ack to the Peer. Server.Append writes the
// client's packet: the input ack, the messages due within the Channel's
// share of the budget, then the Peer's packet (give the Peer StateBudget).
//
// A Channel sends the messages of one union (bitwire.NewUnion) in order,
// exactly once, whatever the loss, duplication and reordering: resent
// every Resend packets until acknowledged, with bounded queues
// (ErrQueueFull) and a refusal of a message that could never fit
// (ErrMessageTooLarge).
//
// docs/replicate.md gives the design and every bit of the packets; the
// TypeScript and C# runtimes implement the client's end (docs/clients.md).
// Nothing here is safe for concurrent use.
package conn
