package cluster

func init() {
	register(PolicyInfo{Name: Components, Title: "connected components",
		start: func(r *run, _ []int32, _ int32) componentClusterer { return components{r} }})
}

// components keeps each connected component whole, its keeper by the rule.
type components struct{ r *run }

func (c components) component(_ int32, nodes []int32) { c.r.addProto(c.r.pick(nodes), nodes) }
