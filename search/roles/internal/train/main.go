// Command train fits the sentence-role classifier to CSAbstruct's train
// split, chooses the weight of role transitions on its dev split, reports
// accuracy and per-role F1 on its test split, and writes the weights that
// package roles embeds:
//
//	go generate ./search/roles
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/papersearch/papersearch/search/roles"
)

func main() {
	data := flag.String("data", "../../../shared/data/csabstruct", "folder of CSAbstruct's train.jsonl, dev.jsonl and test.jsonl")
	out := flag.String("out", "weights.bin", "file to write the weights to")
	flag.Parse()
	read := func(split string) []roles.Abstract {
		f, err := os.Open(filepath.Join(*data, split+".jsonl"))
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		set, err := roles.ReadCSAbstruct(f)
		if err != nil {
			log.Fatalf("%s: %v", split, err)
		}
		return set
	}
	train, dev, test := read("train"), read("dev"), read("test")
	c := roles.Train(train, dev, roles.TrainOptions{})
	for _, split := range []struct {
		name string
		set  []roles.Abstract
	}{{"dev", dev}, {"test", test}} {
		rep := roles.Evaluate(c, split.set)
		fmt.Printf("%s: %d sentences, accuracy (micro-F1) %.4f, macro-F1 %.4f, F1 background %.4f method %.4f result %.4f other %.4f\n",
			split.name, rep.Sentences, rep.Accuracy, rep.MacroF1,
			rep.F1[roles.Background], rep.F1[roles.Method], rep.F1[roles.Result], rep.F1[roles.Other])
	}
	b, err := c.MarshalBinary()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		log.Fatal(err)
	}
}
