package rescale

import "github.com/flinkpreflight/preflight/internal/checkpoint"

// operatorIDFromUID is the OperatorID Flink generates for uid(s) (StreamGraphHasherV2).
func operatorIDFromUID(uid string) checkpoint.OperatorID { return checkpoint.OperatorIDFromUID(uid) }
