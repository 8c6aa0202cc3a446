package server

// The server tests read checkpoints from S3 (a versitygw on loopback), so their binary links the
// object-store drivers as preflightd's main does; package server itself does not.
import _ "github.com/flinkpreflight/preflight/internal/source/cloud"
