package checkpoint

import "testing"

func TestOperatorIDFromUID(t *testing.T) {
	for _, tc := range []struct{ uid, want string }{
		{"kafka-source-operator-uid", "cb16aa5adb311e8ac72482def19accbe"},
		{"broadcast-source-uid", "3a6f51704798c4f418be51bfb6813b77"},
		{"source", "e5a72f353fc1e6bbf3bd96a41384998c"},
		{"flatMap", "4cf304da7f0eed0ff91c4cb6128e1ca7"},
		{"sink", "2e588ce1c86a9d46e2e85186773ce4fd"},
		{"kafka-source", "61252f73469d3ffba207c548d29a0267"},
		{"FileSinkCompactorCoordinator", "8c63dd077b1c89d0e5f9cec410a81d63"},
		{"FileSinkCompactorOperator", "b2dbf2878946b190baf97b8083810eb3"},
		{"keyed-broadcast-process-uid", "413c1d6f88ee8627fe4b8bc533b4cf1b"},
	} {
		if got := OperatorIDFromUID(tc.uid).String(); got != tc.want {
			t.Errorf("OperatorIDFromUID(%q) = %s, want %s", tc.uid, got, tc.want)
		}
	}
}

func TestParseOperatorID(t *testing.T) {
	const s = "0123456789abcdeffedcba9876543210"
	id, err := ParseOperatorID(s)
	if err != nil || id.String() != s || id[0] != 0x01 || id[15] != 0x10 {
		t.Fatalf("ParseOperatorID(%q) = %v, %v", s, id, err)
	}
	for _, bad := range []string{"", "0123", s + "00", "zz23456789abcdeffedcba9876543210"} {
		if _, err := ParseOperatorID(bad); err == nil {
			t.Errorf("ParseOperatorID(%q) succeeded", bad)
		}
	}
}
