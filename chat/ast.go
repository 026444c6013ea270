package chat

// The syntax tree. Statements and expressions share one node type, as in
// the reference: a template is a list of nodes, each of which renders to a
// string (statements) or a value that is printed (expressions).
type node any

// Statements.
type (
	// textNode is template text outside tags, printed as it is.
	textNode struct{ text string }

	// commentNode is {# … #}; it renders to nothing.
	commentNode struct{}

	// ifNode is {% if test %}body{% elif … %}…{% else %}els{% endif %};
	// an elif is an ifNode alone in els.
	ifNode struct {
		test      node
		body, els []node
	}

	// forNode is {% for target in iter %}body{% else %}els{% endfor %};
	// target is an identNode or a tupleNode of them, iter may be a
	// selectNode (for x in xs if cond).
	forNode struct {
		target    node
		iter      node
		body, els []node
	}

	// setNode is {% set target = value %} or, with value nil, the block
	// form {% set target %}body{% endset %}. target is an identNode, a
	// tupleNode of them, or a memberNode (a namespace attribute).
	setNode struct {
		target node
		value  node
		body   []node
	}

	// macroNode is {% macro name(params) %}body{% endmacro %}; each param
	// is an identNode or a kwargNode (a parameter with a default).
	macroNode struct {
		name   string
		params []node
		body   []node
	}

	// callBlockNode is {% call(params) macro(args) %}body{% endcall %}: the
	// macro runs with caller() rendering body.
	callBlockNode struct {
		call   *callNode
		params []node
		body   []node
	}

	// filterBlockNode is {% filter f(args) %}body{% endfilter %}.
	filterBlockNode struct {
		filter node
		body   []node
	}

	breakNode    struct{}
	continueNode struct{}
)

// Expressions.
type (
	stringNode struct{ s string }
	// numberNode is an integer or float literal.
	numberNode struct{ n number }
	identNode  struct{ name string }
	listNode   struct{ items []node }
	tupleNode  struct{ items []node }
	// objectNode is {key: value, …}; keys are expressions.
	objectNode struct{ keys, vals []node }

	// memberNode is obj.prop (computed false: prop is an identNode or a
	// numberNode) or obj[prop] (computed true; prop may be a sliceNode).
	memberNode struct {
		obj, prop node
		computed  bool
	}

	// sliceNode is [start:stop:step]; a nil part is left out.
	sliceNode struct{ start, stop, step node }

	// callNode is callee(args); args holds expressions, kwargNodes,
	// spreadNodes (*x) and kwspreadNodes (**x).
	callNode struct {
		callee node
		args   []node
	}
	kwargNode struct {
		name  string
		value node
	}
	spreadNode   struct{ x node }
	kwspreadNode struct{ x node }

	// binaryNode covers arithmetic, comparison, membership ("in",
	// "not in"), concatenation (~) and the logical "and" and "or".
	binaryNode struct {
		op   string
		l, r node
	}
	// chainNode is a chain of + - ~ with a ~ after a + or -: the
	// reference folds it left to right, Python's Jinja binds ~ first; it
	// renders when both give the same value.
	chainNode struct {
		xs  []node
		ops []string
	}

	// unaryNode is "not", "-" or "+".
	unaryNode struct {
		op string
		x  node
	}

	// filterNode is x | filter, where filter is an identNode or a callNode
	// of one (anything else is an error when it runs, as in the reference).
	filterNode struct {
		x      node
		filter node
	}

	// testNode is x is [not] name.
	testNode struct {
		x      node
		negate bool
		name   string
	}

	// selectNode is "x if test" with no else: undefined when test fails.
	selectNode struct{ x, test node }

	// ternaryNode is "then if cond else els".
	ternaryNode struct{ cond, then, els node }
)
