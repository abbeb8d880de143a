package pico

func isClassical(scheme string) bool {
	for _, s := range ClassicalSchemes {
		if s == scheme {
			return true
		}
	}
	return false
}

// VerifyClassical checks a classical scheme's device vector on the host.
func VerifyClassical(scheme string, v map[string][]byte) []Check {
	return []Check{{Scheme: scheme, Name: "classical vector", Lib: "-", OK: false, Detail: "not implemented"}}
}
