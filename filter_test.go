package papersearch

import (
	"strings"
	"testing"
)

// TestValidCollectionTag: a collection is a tag that is no mark, up to
// MaxTagLength, in any letter case; its mark is a tag.
func TestValidCollectionTag(t *testing.T) {
	longest := strings.Repeat("a", MaxTagLength)
	for tag, want := range map[string]bool{
		"reading": true, "Reading.List_2": true, longest: true, "notes": true, "not": true,
		longest + "a": false, "": false, "-x": false, "has space": false,
		"not.x": false, "NOT.x": false, "not.": false,
	} {
		if got := ValidCollectionTag(tag); got != want {
			t.Errorf("ValidCollectionTag(%q) = %v, want %v", tag, got, want)
		}
		if want {
			if _, ok := CleanTags([]string{tag, NotInterestedTag(tag)}); !ok {
				t.Errorf("%q or its mark refused as a tag", tag)
			}
		}
	}
}
