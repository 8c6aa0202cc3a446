package checkpoint

// decodeProperties decodes the Java-serialized CheckpointProperties trailer (spec §5.3).
func decodeProperties(b []byte) (*CheckpointProperties, error) {
	return nil, &FormatError{Msg: "not implemented"}
}
