package checkpoint

import (
	"encoding/hex"
	"fmt"
)

// OperatorID is Flink's 16-byte OperatorID (or JobVertexID) in file order: lowerPart big-endian,
// then upperPart big-endian. In that order the hex encoding is exactly what Flink prints.
type OperatorID [16]byte

// String returns the 32 lowercase hex digits Flink prints for the ID.
func (id OperatorID) String() string { return hex.EncodeToString(id[:]) }

// ParseOperatorID parses 32 hex digits as Flink prints them.
func ParseOperatorID(s string) (OperatorID, error) {
	var id OperatorID
	if len(s) != 32 {
		return id, fmt.Errorf("operator ID %q: want 32 hex digits, got %d characters", s, len(s))
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("operator ID %q: %v", s, err)
	}
	return id, nil
}
