package findings

import "testing"

func TestUIDHash(t *testing.T) {
	for _, tc := range []struct{ uid, want string }{
		{"kafka-source-operator-uid", "cb16aa5adb311e8ac72482def19accbe"},
		{"FileSinkCompactorCoordinator", "8c63dd077b1c89d0e5f9cec410a81d63"},
		{"FileSinkCompactorOperator", "b2dbf2878946b190baf97b8083810eb3"},
	} {
		if got := uidHash(tc.uid).String(); got != tc.want {
			t.Errorf("uidHash(%q) = %s, want %s", tc.uid, got, tc.want)
		}
	}
}
