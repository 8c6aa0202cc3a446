package findings

import "github.com/flinkpreflight/preflight/internal/checkpoint"

// uidHash is Flink's operator ID for a uid (murmur3_128 of the UTF-8 bytes).
func uidHash(uid string) checkpoint.OperatorID { return checkpoint.OperatorIDFromUID(uid) }
