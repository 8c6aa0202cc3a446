package statefiles

import "github.com/flinkpreflight/preflight/internal/findings"

// The rule IDs of verify_files.
const (
	// MissingRuleID: a referenced state file is missing, of another size than recorded, or refused.
	MissingRuleID = "PF210"
	// UnverifiedRuleID: referenced state files that could not be verified.
	UnverifiedRuleID = "PF211"
)

// missingRule is PF210.
var missingRule = findings.RuleMeta{
	ID: MissingRuleID, Title: "State file the checkpoint references is missing, truncated or unreadable", Severity: findings.Error,
	Cause: "A restore opens every file the checkpoint's state handles name: operator and keyed state files, the shared and private files of " +
		"incremental (RocksDB/ForSt) snapshots, file-merging segments, unaligned-checkpoint channel state and changelog files; relative handles " +
		"of native and canonical savepoints are resolved against the folder of _metadata. A file that is gone (removed by a retention or " +
		"lifecycle rule, a savepoint copied without its files, relative paths kept after a CLAIM restore: FLINK-39964, FLINK-28843), " +
		"shorter than recorded, or not readable by the job's identity (FLINK-32012) fails the restore with FileNotFoundException, " +
		"EOFException or an access-denied error, at whatever parallelism.",
	Remedies: []findings.Remedy{{Text: "Restore the files (from the bucket's versioning or a backup), restore from another checkpoint or " +
		"savepoint whose files are complete, or grant the job's identity read access to them. Keep a savepoint's folder whole when you " +
		"copy or move it: relative handles need their files beside _metadata."}},
	References: []string{"FLINK-39964", "FLINK-28843", "FLINK-32012",
		"https://nightlies.apache.org/flink/flink-docs-stable/docs/ops/state/savepoints/#savepoint-format"},
}

// unverifiedRule is PF211.
var unverifiedRule = findings.RuleMeta{
	ID: UnverifiedRuleID, Title: "State files the checkpoint references could not be verified", Severity: findings.Warning,
	Cause: "verify_files stats every referenced state file through the same drivers and allowlist as _metadata. Files outside the " +
		"allowlist, on a file system without a driver here (hdfs://, oss://), relative files of an uploaded _metadata (whose folder is " +
		"unknown), files of a store that did not answer, and files not reached before the verification's budget ran out are not verified: " +
		"the restore may still fail to find them.",
	Remedies: []findings.Remedy{{Text: "Add the checkpoint's storage (the job's checkpoint folder with shared/ and taskowned/) to the " +
		"allowlist, check from a source URI instead of an upload, or give the verification a larger budget (--verify-files-budget, " +
		"CheckOptions.verify_files_budget_ms)."}},
}

func init() { findings.RegisterDoc(missingRule, unverifiedRule) }
