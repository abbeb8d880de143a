package tlsrun

import (
	"fmt"
	"slices"

	"pqrepro/datasets/tlsdata"
	"pqrepro/experiments/instruments/handshake"
)

// PrimaryCell returns the profile's primary cell ([paper.cell]). Its
// stack, path and key-share mode each default to the first stack, the
// profile's first path and the first key-share mode when the spec leaves
// it empty.
func (s *Spec) PrimaryCell(profile string) tlsdata.Cell {
	c := s.Paper.Cell
	if c.Stack == "" {
		c.Stack = s.stacks()[0]
	}
	if c.Path == "" {
		c.Path = s.Paths(profile)[0]
	}
	if c.KeyShare == "" {
		c.KeyShare = string(s.keyShares()[0])
	}
	return c
}

// validateCell checks that [paper.cell] names a stack, a key-share mode and
// a path the matrix has. A profile whose paths lack the cell's path is
// reported by Units' callers (Plan) since a profile may leave it out.
func (s *Spec) validateCell() []error {
	var errs []error
	c := s.Paper.Cell
	if c.Stack != "" && !slices.Contains(s.stacks(), c.Stack) {
		errs = append(errs, fmt.Errorf("[paper.cell] stack = %q is not one of [matrix] stacks %v", c.Stack, s.stacks()))
	}
	if c.KeyShare != "" && !slices.Contains(s.keyShares(), handshake.KeyShare(c.KeyShare)) {
		errs = append(errs, fmt.Errorf("[paper.cell] keyshare = %q is not one of [matrix] keyshares %v", c.KeyShare, s.keyShares()))
	}
	if c.Path != "" {
		if err := validPaths("[paper.cell] path", []string{c.Path}); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// cellOf is the cell a unit runs in.
func cellOf(c Config) tlsdata.Cell {
	return tlsdata.Cell{Stack: c.Stack, Path: c.Path, KeyShare: string(c.KeyShare)}
}

// isPaperConfig says whether c's certificate key and group are those of
// one of the paper's configurations.
func (s *Spec) isPaperConfig(c Config) bool {
	return slices.ContainsFunc(s.Paper.Configs, func(p PaperConfig) bool {
		g, err := parseGroup(p.Group)
		return err == nil && p.CertKey == string(c.Key) && g == c.Group
	})
}

// unitN returns the measured connections and the block size of unit c in
// the profile. They are the profile's n and block in the primary cell, and
// outside it other_cells_n (when set) cut into one block per round of the
// primary cell, so that every configuration runs in every round and drift
// hits all cells alike.
//
// An emulated-path configuration has the profile's emulated_n, spread the
// same way.
func unitN(p Profile, primary tlsdata.Cell, c Config) (n, block int) {
	rounds := (p.N + p.Block - 1) / p.Block
	if c.isEmulated() {
		return p.EmulatedN, (p.EmulatedN + rounds - 1) / rounds
	}
	if p.OtherCellsN == 0 || cellOf(c) == primary {
		return p.N, p.Block
	}
	return p.OtherCellsN, (p.OtherCellsN + rounds - 1) / rounds
}

// Design returns what the analysis needs of the spec for profile: each
// paper configuration's config ID by its name, the primary cell and the
// fallback. It is a datasets type so the analysis reads it without
// importing the experiment.
func (s *Spec) Design(profile string) (tlsdata.Design, error) {
	d := tlsdata.Design{Configs: map[string]string{}, Cell: s.PrimaryCell(profile), Fallback: s.Paper.Fallback}
	for _, p := range s.Paper.Configs {
		key, err := handshake.ParseCertKey(p.CertKey)
		if err != nil {
			return tlsdata.Design{}, err
		}
		group, err := handshake.ParseGroup(p.Group)
		if err != nil {
			return tlsdata.Design{}, err
		}
		d.Configs[p.Name] = ConfigName(key, group, s.Matrix.Chain)
	}
	return d, nil
}
