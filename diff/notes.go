package diff

import (
	"sort"
	"strings"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/symbolize"
)

// annotateMoves finds methods that appeared on the new side while a method
// of the same MatchKey vanished from a different module (a native export
// that became managed code, a function that moved between libraries) and
// notes both ends: "was in native" on the new row, "now in <module>" on the
// gone one. Pairs are only made between different modules (or a C-style
// native name and a managed one), so two unrelated `Wait` methods of one
// library never pair.
func annotateMoves(rows []result.MethodRow) {
	gone := map[string][]int{}
	for i := range rows {
		if rows[i].New == 0 && rows[i].Base > 0 {
			k := symbolize.MatchKey(rows[i].Name)
			gone[k] = append(gone[k], i)
		}
	}
	if len(gone) == 0 {
		return
	}
	var appeared []int
	for i := range rows {
		if rows[i].Base == 0 && rows[i].New > 0 {
			appeared = append(appeared, i)
		}
	}
	// Pair the largest appearances first so the pairing is deterministic.
	sort.Slice(appeared, func(x, y int) bool {
		a, b := rows[appeared[x]], rows[appeared[y]]
		if a.New != b.New {
			return a.New > b.New
		}
		return a.Name < b.Name
	})
	used := map[int]bool{}
	for _, i := range appeared {
		cands := gone[symbolize.MatchKey(rows[i].Name)]
		best := -1
		for _, j := range cands {
			if used[j] || !movedBetween(rows[j], rows[i]) {
				continue
			}
			if best < 0 || rows[j].Base > rows[best].Base {
				best = j
			}
		}
		if best < 0 {
			continue
		}
		used[best] = true
		rows[i].Note = "was in " + originLabel(rows[best])
		rows[best].Note = "now in " + originLabel(rows[i])
	}
}

// movedBetween reports whether old and new are the same code in different
// places: different modules, or one a C-style native symbol and the other a
// managed name.
func movedBetween(old, new result.MethodRow) bool {
	if old.Module != "" && new.Module != "" {
		return old.Module != new.Module
	}
	return isCStyle(old.Name) != isCStyle(new.Name)
}

// isCStyle reports whether a name is a bare native symbol (no namespace or
// type separator).
func isCStyle(name string) bool {
	n := symbolize.Normalize(name)
	return !strings.ContainsAny(n, ".+:/")
}

func originLabel(r result.MethodRow) string {
	if r.Module == "" {
		if isCStyle(r.Name) {
			return "native"
		}
		return "managed code"
	}
	return symbolize.ModuleLabel(r.Module)
}
