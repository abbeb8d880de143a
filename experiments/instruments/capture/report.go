package capture

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Warnings describes, one line each, what the reader skipped, corrected or
// could not confirm. That is, skipped packets by reason (with the
// undecodable link types), corrected original lengths, frames cut by the
// snap length, incomplete records, and what the key log held and confirmed.
// Command-line tools print them on stderr; they are empty for a clean
// capture with no key log.
func (r *Result) Warnings() []string {
	var w []string
	sk := r.Skipped
	if n := sk.NotIP + sk.NotTCP + sk.Fragments + sk.Malformed + sk.UnknownLink; n > 0 {
		var parts []string
		for _, p := range []struct {
			n    int64
			what string
		}{{sk.NotIP, "not IP"}, {sk.NotTCP, "not TCP"}, {sk.Fragments, "IP fragments"}, {sk.Malformed, "malformed"}, {sk.UnknownLink, "unknown link type"}} {
			if p.n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", p.what, p.n))
			}
		}
		msg := fmt.Sprintf("skipped %d of %d packets: %s", n, r.Packets, strings.Join(parts, ", "))
		if len(r.UnknownLinkTypes) > 0 {
			var lts []string
			for _, lt := range slices.Sorted(maps.Keys(r.UnknownLinkTypes)) {
				lts = append(lts, fmt.Sprintf("%d (%d packets)", lt, r.UnknownLinkTypes[lt]))
			}
			msg += fmt.Sprintf("; link types the reader cannot decode: %s (see https://www.tcpdump.org/linktypes.html)", strings.Join(lts, ", "))
		}
		w = append(w, msg)
	}
	if r.OrigLenCorrected > 0 {
		w = append(w, fmt.Sprintf("%d frames have an original length that disagrees with their captured bytes or IP length (damaged record headers?); their frame bytes count the IP length instead (reason %s)", r.OrigLenCorrected, ReasonOrigLen))
	}
	if r.SnapCut > 0 {
		w = append(w, fmt.Sprintf("%d frames were cut by the snap length: times, packets and byte counts come from the headers; fields that need cut payload are empty (see the reason column)", r.SnapCut))
	}
	if r.DroppedNoHello > 0 {
		w = append(w, fmt.Sprintf("dropped the state of %d flows that carried no ClientHello (idle for %v of capture time, or more than %d open at once: a SYN scan?); they make no records", r.DroppedNoHello, r.noHelloIdle, r.noHelloMax))
	}
	if r.DroppedUnfinished > 0 {
		w = append(w, fmt.Sprintf("dropped the state of %d flows that sent a ClientHello but no client Finished (more than %d held at once, the oldest first: a ClientHello flood?); they make no records", r.DroppedUnfinished, r.unfinishedMax))
	}
	incomplete := 0
	for _, rec := range r.Records {
		if !rec.Complete {
			incomplete++
		}
	}
	if incomplete > 0 {
		w = append(w, fmt.Sprintf("%d of %d records are incomplete (see the reason column)", incomplete, len(r.Records)))
	}
	k := r.KeyLog
	switch {
	case k.Lines == 0:
	case k.Unusable == k.Lines:
		w = append(w, fmt.Sprintf("key log: none of its %d lines is a key log line (LABEL <64 hex digits> <hex secret>); is it an NSS key log?", k.Lines))
	case k.Unusable > 0:
		w = append(w, fmt.Sprintf("key log: %d of %d lines unusable (not LABEL <64 hex digits> <hex secret>)", k.Unusable, k.Lines))
	}
	switch {
	case k.Lines > k.Unusable && k.Secrets == 0:
		w = append(w, "key log: no CLIENT_HANDSHAKE_TRAFFIC_SECRET line (TLS 1.3), so no client Finished can be checked")
	case k.Secrets > 0 && k.Matched == 0:
		w = append(w, fmt.Sprintf("key log: none of its %d client handshake secrets belongs to a connection in the capture (a key log of another run?)", k.Secrets))
	case k.Matched > 0 && k.Matched < len(r.Records):
		w = append(w, fmt.Sprintf("key log: secrets for %d of %d records; the others are finished_check=%s", k.Matched, len(r.Records), CheckNoSecret))
	}
	if k.Conflicts > 0 {
		w = append(w, fmt.Sprintf("key log: %d secrets differ from the capture's own (Decryption Secrets Block); the capture's are used", k.Conflicts))
	}
	if k.Failed > 0 {
		w = append(w, fmt.Sprintf("key log: %d client Finished records did not decrypt to a Finished with their secret (a wrong key log?); finished_check says which", k.Failed))
	}
	return w
}
