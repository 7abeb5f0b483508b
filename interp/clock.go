// Package interp draws a replicated world smoothly: a Clock that
// estimates the server's tick from the ticks of the packets a client
// receives and when they arrive (with the clock's drift and the arrival
// jitter), a render time behind it by an adaptive delay, and an
// Interpolator that builds the state of an entity at that render time from
// the two kept states around it: quantized floats (q, fixed) lerped,
// quaternions slerped, the rest held, and a jump beyond a threshold (a
// teleport) not interpolated at all.
//
// The states come from replicate.Client.States (any Source does). A
// Clock and an Interpolator are not safe for concurrent use, except that
// an Interpolator's Lerp and Sample may run concurrently with their own
// destinations.
package interp

import (
	"math"
	"time"
)

// Clock defaults.
const (
	// DefaultMinDelay is the least interpolation delay, in ticks: with
	// packets every tick, two ticks leave a state on each side of the
	// render time through the loss of one packet.
	DefaultMinDelay = 2
	// DefaultMaxDelay bounds the delay, in ticks, however bad the jitter:
	// a replicate.Client keeps BaselineDepth (8) states of an entity, so
	// with a packet a tick a render time more than about 7 ticks behind
	// the newest state falls before the oldest and is held, not
	// interpolated.
	DefaultMaxDelay = 6
	// DefaultJitterFactor is how many jitters (the arrival times' standard
	// deviation around the fitted line, in ticks) the delay adds to the
	// minimum.
	DefaultJitterFactor = 2
	// forget weighs the samples of the fit: each new packet multiplies
	// the weight of the ones before by it (a memory of about 200 packets,
	// 7 seconds at 30 ticks a second).
	forget = 0.995
)

// Clock estimates the server's tick at any instant from packet arrivals.
// It fits the line tick = rate·(time − t0) through the (arrival, tick)
// pairs with exponentially fading weights (least squares), so a server
// clock that runs fast or slow (drift) is followed, and measures the
// jitter as the standard deviation of the arrivals around the line. The
// zero value is not usable: create it with NewClock.
type Clock struct {
	rate     float64 // nominal ticks a second
	minDelay float64
	maxDelay float64
	factor   float64

	started bool
	t0      time.Time // the first arrival: times are seconds since it
	k0      uint32    // the first tick: ticks are counted from it
	newest  uint32

	// The fit's weighted sums.
	w, sx, sy, sxx, sxy float64
	jw, js              float64 // the residuals' weight and weighted sum of squares
	n                   int
	delay               float64 // the smoothed delay, ticks
}

// NewClock returns a Clock for a server of tickRate ticks a second, with
// DefaultMinDelay, DefaultMaxDelay and DefaultJitterFactor.
func NewClock(tickRate float64) *Clock {
	if !(tickRate > 0) {
		tickRate = 30
	}
	return &Clock{rate: tickRate, minDelay: DefaultMinDelay, maxDelay: DefaultMaxDelay, factor: DefaultJitterFactor, delay: DefaultMinDelay}
}

// SetDelay sets the least and the largest interpolation delay in ticks and
// the number of jitters added to the least (0 ≤ least ≤ largest).
func (c *Clock) SetDelay(least, largest, jitters float64) {
	if least < 0 || largest < least || jitters < 0 {
		return
	}
	c.minDelay, c.maxDelay, c.factor = least, largest, jitters
	c.delay = min(max(c.delay, least), largest)
}

// Observe records that a packet of the server's tick arrived at at. Call
// it for every packet the client accepts (replicate.Info.Tick). Ticks
// older than the newest seen still count: they are arrivals too.
func (c *Clock) Observe(tick uint32, at time.Time) {
	if !c.started {
		c.started, c.t0, c.k0, c.newest = true, at, tick, tick
	}
	if int32(tick-c.newest) > 0 {
		c.newest = tick
	}
	x := at.Sub(c.t0).Seconds()
	y := float64(int32(tick - c.k0))
	if c.n >= 2 {
		// The residual before the sample joins the fit: what a new arrival
		// deviates from what was expected.
		r := y - c.fitAt(x)
		c.jw = forget*c.jw + 1
		c.js = forget*c.js + r*r
	}
	c.w = forget*c.w + 1
	c.sx = forget*c.sx + x
	c.sy = forget*c.sy + y
	c.sxx = forget*c.sxx + x*x
	c.sxy = forget*c.sxy + x*y
	c.n++
	target := min(max(c.minDelay+c.factor*c.Jitter(), c.minDelay), c.maxDelay)
	// Up at once, down slowly: a delay that shrinks too fast runs out of
	// states at the next burst.
	if target > c.delay {
		c.delay = target
	} else {
		c.delay += (target - c.delay) * 0.02
	}
}

// slope returns the fitted ticks per second: the nominal rate until the
// samples span enough time to measure it.
func (c *Clock) slope() float64 {
	d := c.w*c.sxx - c.sx*c.sx
	if c.n < 8 || d <= 1e-9*c.w*c.w {
		return c.rate
	}
	s := (c.w*c.sxy - c.sx*c.sy) / d
	// A drift of more than 10% is not a clock: a stall, a burst.
	return min(max(s, c.rate*0.9), c.rate*1.1)
}

// fitAt is the fitted tick (since the first) at x seconds since the first
// arrival.
func (c *Clock) fitAt(x float64) float64 {
	if c.w == 0 {
		return 0
	}
	s := c.slope()
	return c.sy/c.w + s*(x-c.sx/c.w)
}

// Tick returns the estimated server tick at now, as of the packets' mean
// delay: the tick of the newest state a packet arriving now typically
// carries (fractional). 0 before the first Observe.
func (c *Clock) Tick(now time.Time) float64 {
	if !c.started {
		return 0
	}
	return float64(c.k0) + c.fitAt(now.Sub(c.t0).Seconds())
}

// ServerTick returns the estimated tick the server is at now, given the
// round trip (one way of it is added to Tick); use it, plus a margin of
// a few ticks, to stamp inputs with the tick they are for.
func (c *Clock) ServerTick(now time.Time, rtt time.Duration) float64 {
	return c.Tick(now) + rtt.Seconds()/2*c.slope()
}

// Drift returns how much faster than its nominal rate the server's clock
// runs as measured against the client's (0.001: 0.1% fast).
func (c *Clock) Drift() float64 { return c.slope()/c.rate - 1 }

// Jitter returns the standard deviation of the arrivals around the fitted
// line, in ticks.
func (c *Clock) Jitter() float64 {
	if c.jw == 0 {
		return 0
	}
	return math.Sqrt(c.js / c.jw)
}

// Delay returns the interpolation delay in ticks: the least delay plus the
// jitter factor times the jitter, bounded by the largest; it rises at once
// and falls slowly.
func (c *Clock) Delay() float64 { return c.delay }

// RenderTick returns the tick to draw at now: Tick(now) − Delay().
func (c *Clock) RenderTick(now time.Time) float64 { return c.Tick(now) - c.delay }
