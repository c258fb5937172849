package forme

import (
	"github.com/prose-store/prose/internal/lazyre"
	"strings"
)

// Ingress is how the outside world reaches a gateway: its HTTP routes
// (### Receives), its schedule (### Schedule) and the nodes it wakes
// (### Emits). prose serve reads it from the manifest.
type Ingress struct {
	Node     string   `json:"node"`
	Routes   []Route  `json:"routes"`
	Schedule Schedule `json:"schedule"`
	Emits    []string `json:"emits"`
}

// Route is one "METHOD /path" line of ### Receives.
type Route struct {
	Method string `json:"method"`
	Path   string `json:"path"`
}

// Schedule is a gateway's ### Schedule: a cron expression and time zone
// when written as `cron` and `timezone` items, and every line as written
// (a cadence in prose such as "every weekday at 09:00" stays text).
type Schedule struct {
	Cron     string   `json:"cron,omitempty"`
	Timezone string   `json:"timezone,omitempty"`
	Text     []string `json:"text"`
}

var routeRe = lazyre.New(`^(GET|POST|PUT|PATCH|DELETE|HEAD)\s+(/\S*)`)

func readIngress(u *unit, emits []string) Ingress {
	c := u.c
	in := Ingress{Node: c.Name, Routes: []Route{}, Schedule: Schedule{Text: []string{}}, Emits: emits}
	for _, it := range c.items("receives") {
		head := strings.Trim(strings.TrimSpace(it.Head), "`")
		if m := routeRe().FindStringSubmatch(head); m != nil {
			in.Routes = append(in.Routes, Route{Method: m[1], Path: strings.TrimRight(m[2], "`.,;")})
		}
	}
	for _, it := range c.items("schedule") {
		switch strings.ToLower(it.Name) {
		case "cron":
			in.Schedule.Cron = strings.Trim(it.Desc, "` ")
		case "timezone", "tz":
			in.Schedule.Timezone = strings.Trim(it.Desc, "` ")
		}
		in.Schedule.Text = append(in.Schedule.Text, it.Text)
	}
	if len(c.items("schedule")) == 0 {
		for _, s := range c.sections("schedule") {
			for _, pa := range s.Paras {
				in.Schedule.Text = append(in.Schedule.Text, pa.Text)
			}
		}
	}
	return in
}
