package findings

import "testing"

func TestPluralHelpers(t *testing.T) {
	tests := []struct{ got, want string }{
		{subtasksText(nil), "no new subtask"},
		{subtasksText([]int32{3}), "new subtask 3"},
		{subtasksText([]int32{0, 2, 3, 4}), "new subtasks 0, 2-4"},
		{subtasksVerb(nil, "receive"), "no new subtask receives"},
		{subtasksVerb([]int32{3}, "receive"), "new subtask 3 receives"},
		{subtasksVerb([]int32{4, 5, 6, 7}, "receive"), "new subtasks 4-7 receive"},
		{verbFor(1, "is", "are"), "is"},
		{verbFor(2, "is", "are"), "are"},
		{bytesText(1), "1 byte"},
		{bytesText(2048), "2.0 KiB = 2048 bytes"},
		{upperFirst("operator x"), "Operator x"},
		{upperFirst("\"quoted\""), "\"quoted\""},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
