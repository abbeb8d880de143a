package netstudy

import "strconv"

func itoa(i int) string     { return strconv.Itoa(i) }
func fmtF(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) }
