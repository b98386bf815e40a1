package papersearch

import "testing"

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"Schölkopf": "Scholkopf", "Stéphane": "Stephane", "Veličković": "Velickovic", "Erdős": "Erdos",
		"naïve Bayes": "naive Bayes", "García": "Garcia", "Łukasiewicz": "Lukasiewicz", "Øksendal": "Oksendal",
		"Straße": "Strasse", "Æsir œuvre": "AEsir oeuvre", "plain ASCII": "plain ASCII", "東京": "東京",
	} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}
