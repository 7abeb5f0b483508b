module github.com/bitwire/bitwire/cmd/bitwire-demo

go 1.25.0

require github.com/bitwire/bitwire v0.0.0

require github.com/fatih/structtag v1.2.0 // indirect

replace github.com/bitwire/bitwire => ../..
