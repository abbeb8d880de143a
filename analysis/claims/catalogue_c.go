package claims

// Study C claims are added with the Study C results schema.
func studyC() []Claim { return nil }
