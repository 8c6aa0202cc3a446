package checkpoint

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
	"strings"
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

// MinIDPrefix is the shortest prefix of an operator ID's hex that names the operator: reports
// print IDs shortened to it.
const MinIDPrefix = 8

// IsIDPrefix reports whether s can be a shortened operator ID: MinIDPrefix to 31 hex digits, in
// either case.
func IsIDPrefix(s string) bool {
	if len(s) < MinIDPrefix || len(s) >= 2*len(OperatorID{}) {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// HasPrefix reports whether prefix, which IsIDPrefix accepts, begins id's hex.
func (id OperatorID) HasPrefix(prefix string) bool {
	return strings.HasPrefix(id.String(), strings.ToLower(prefix))
}

// OperatorIDFromUID returns the OperatorID Flink derives from a user-set operator UID
// (StreamGraphHasherV2): Guava's murmur3_128 with seed 0 over the UID's UTF-8 bytes, as bytes
// (h1 little-endian, then h2 little-endian).
func OperatorIDFromUID(uid string) OperatorID {
	h1, h2 := murmur3x64128([]byte(uid), 0)
	var id OperatorID
	binary.LittleEndian.PutUint64(id[:8], h1)
	binary.LittleEndian.PutUint64(id[8:], h2)
	return id
}

// murmur3x64128 is MurmurHash3_x64_128.
func murmur3x64128(data []byte, seed uint32) (h1, h2 uint64) {
	h1, h2 = uint64(seed), uint64(seed)
	n := len(data)
	for len(data) >= 16 {
		k1 := binary.LittleEndian.Uint64(data)
		k2 := binary.LittleEndian.Uint64(data[8:])
		data = data[16:]
		h1 ^= mixK1(k1)
		h1 = bits.RotateLeft64(h1, 27) + h2
		h1 = h1*5 + 0x52dce729
		h2 ^= mixK2(k2)
		h2 = bits.RotateLeft64(h2, 31) + h1
		h2 = h2*5 + 0x38495ab5
	}
	var k1, k2 uint64
	for i := len(data) - 1; i >= 8; i-- {
		k2 ^= uint64(data[i]) << (8 * (i - 8))
	}
	for i := min(len(data), 8) - 1; i >= 0; i-- {
		k1 ^= uint64(data[i]) << (8 * i)
	}
	if len(data) > 8 {
		h2 ^= mixK2(k2)
	}
	if len(data) > 0 {
		h1 ^= mixK1(k1)
	}
	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1 = fmix64(h1)
	h2 = fmix64(h2)
	h1 += h2
	h2 += h1
	return h1, h2
}

func mixK1(k uint64) uint64 {
	k *= 0x87c37b91114253d5
	k = bits.RotateLeft64(k, 31)
	return k * 0x4cf5ad432745937f
}

func mixK2(k uint64) uint64 {
	k *= 0x4cf5ad432745937f
	k = bits.RotateLeft64(k, 33)
	return k * 0x87c37b91114253d5
}

func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}
