package providercheck

import (
	"encoding/xml"
	"fmt"
)

// JUnit renders the report as JUnit XML for CI systems: one testsuite per
// group, one testcase per check (classname "pact.GROUP", name "ID §clause
// title"); a failed check is a <failure> whose message is the reason and
// whose text is what was sent and what came back; a skipped check is
// <skipped> with the reason.
func (rep *Report) JUnit() ([]byte, error) {
	type failure struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
	type skipped struct {
		Message string `xml:"message,attr"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Failure   *failure `xml:"failure,omitempty"`
		Skipped   *skipped `xml:"skipped,omitempty"`
		Output    string   `xml:"system-out,omitempty"`
	}
	type testsuite struct {
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Skipped  int        `xml:"skipped,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	type testsuites struct {
		XMLName  xml.Name    `xml:"testsuites"`
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Suites   []testsuite `xml:"testsuite"`
	}
	out := testsuites{Name: "pact provider check " + rep.Brand, Tests: len(rep.Results), Failures: rep.Failed, Skipped: rep.Skipped}
	index := map[string]int{}
	for _, res := range rep.Results {
		i, ok := index[res.Group]
		if !ok {
			i = len(out.Suites)
			index[res.Group] = i
			out.Suites = append(out.Suites, testsuite{Name: "pact." + res.Group})
		}
		s := &out.Suites[i]
		tc := testcase{Name: fmt.Sprintf("%s %s %s", res.ID, res.Clause, res.Title), Classname: "pact." + res.Group,
			Output: fmt.Sprintf("sent: %s\ngot: %s", res.Sent, res.Got)}
		s.Tests++
		switch res.Status {
		case Fail:
			s.Failures++
			tc.Failure = &failure{Message: res.Reason, Text: fmt.Sprintf("sent: %s\ngot: %s", res.Sent, res.Got)}
		case Skip:
			s.Skipped++
			tc.Skipped = &skipped{Message: res.Reason}
		}
		s.Cases = append(s.Cases, tc)
	}
	b, err := xml.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}
