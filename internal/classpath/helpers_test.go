package classpath

import "errors"

func asInputError(err error, target **InputError) bool { return errors.As(err, target) }
