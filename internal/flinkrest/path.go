package flinkrest

import (
	"fmt"
	"net/url"
	"strings"
)

// SourceURI turns a checkpoint's external path as Flink reports it into a URI that
// internal/source opens: Flink's "file:/x" (one slash, as org.apache.flink.core.fs.Path prints
// local paths) becomes "/x"; the S3 file systems' schemes (s3a, s3p, s3n) become s3; Azure's
// wasb(s)://container@account.blob.core.windows.net/p and abfs(s)://container@account.dfs...
// become azblob://container/p (the account comes from the environment, as gocloud's azblob
// driver reads it). Schemes Preflight has no reader for (hdfs, oss, viewfs) are a
// FailedPrecondition error naming the path.
func SourceURI(external string) (string, error) {
	if external == "" || external == notAddressable {
		return "", &Error{Kind: FailedPrecondition, Msg: "the checkpoint has no external path (JobManager checkpoint storage)"}
	}
	if !strings.Contains(external, ":") {
		return external, nil // a bare local path
	}
	u, err := url.Parse(external)
	if err != nil {
		return "", &Error{Kind: FailedPrecondition, Msg: fmt.Sprintf("checkpoint path %q cannot be parsed", external), Err: err}
	}
	switch strings.ToLower(u.Scheme) {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return "", &Error{Kind: FailedPrecondition, Msg: fmt.Sprintf("checkpoint path %q names a host", external)}
		}
		return u.Path, nil
	case "s3", "s3a", "s3p", "s3n":
		return "s3://" + u.Host + u.Path, nil
	case "gs":
		return "gs://" + u.Host + u.Path, nil
	case "azblob":
		return external, nil
	case "wasb", "wasbs", "abfs", "abfss":
		container := u.User.Username()
		if container == "" {
			return "", &Error{Kind: FailedPrecondition, Msg: fmt.Sprintf("checkpoint path %q: want container@account", external)}
		}
		return "azblob://" + container + u.Path, nil
	}
	return "", &Error{Kind: FailedPrecondition, Msg: fmt.Sprintf("checkpoint path %q: Preflight reads local, s3, gs and Azure paths, not %s://; copy the checkpoint's _metadata and pass it instead", external, u.Scheme)}
}
