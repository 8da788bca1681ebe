package frontend

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// The lexer never fails: characters no rule accepts become Invalid tokens,
// which the parser reports with their position.
var kgLexer = lexer.MustSimple([]lexer.SimpleRule{
	{Name: "LineComment", Pattern: `//[^\n]*`},
	{Name: "BlockComment", Pattern: `/\*([^*]|\*+[^*/])*\*+/`},
	{Name: "OpenComment", Pattern: `/\*`},
	{Name: "Float", Pattern: `\d+\.\d+([eE][+-]?\d+)?|\d+[eE][+-]?\d+`},
	{Name: "Int", Pattern: `\d+`},
	{Name: "Ident", Pattern: `[A-Za-z_][A-Za-z0-9_]*`},
	{Name: "String", Pattern: `"(\\.|[^"\\\n])*"`},
	{Name: "Op", Pattern: `\?\?|->|\.\.|==|!=|<=|>=|&&|\|\||[-+*/%<>=!?:,;()\[\]{}@]`},
	{Name: "Whitespace", Pattern: `[ \t\r\n]+`},
	{Name: "Invalid", Pattern: `.`},
})

// The participle grammar is a concrete syntax tree; parse.go turns it into
// the AST. Binary operators are parsed as flat operand lists and grouped by
// precedence afterwards, which keeps the grammar LL(1).

type gDecl struct {
	Fn       *gFn       `parser:"@@"`
	Kernel   *gKernel   `parser:"| @@"`
	Instance *gInstance `parser:"| @@"`
}

type gIdent struct {
	Pos    lexer.Position
	Name   string `parser:"@Ident"`
	EndPos lexer.Position
}

type gFn struct {
	Pos    lexer.Position
	Name   *gIdent   `parser:"\"fn\" @@"`
	Params []*gIdent `parser:"\"(\" (@@ (\",\" @@)*)? \")\""`
	Body   *gExpr    `parser:"\"=\" @@"`
	EndPos lexer.Position
}

type gKernel struct {
	Pos       lexer.Position
	Name      *gIdent        `parser:"\"kernel\" @@"`
	Sizes     *gSizes        `parser:"(\"<\" @@ \">\")?"`
	Inputs    []*gTensorDecl `parser:"\"(\" (@@ (\",\" @@)*)? \")\""`
	Outputs   []*gTensorDecl `parser:"\"->\" \"(\" (@@ (\",\" @@)*)? \")\""`
	Where     []*gDerived    `parser:"(\"where\" @@ (\",\" @@)*)?"`
	Attrs     []*gAttr       `parser:"@@*"`
	Open      lexer.Position
	LBrace    string   `parser:"@\"{\""`
	Stmts     []*gStmt `parser:"(@@ \";\"?)*"`
	RBracePos lexer.Position
	RBrace    string `parser:"@\"}\""`
	EndPos    lexer.Position
}

type gSizes struct {
	Dims   []*gIdent `parser:"(@@ (\",\" @@)*)?"`
	Semi   bool      `parser:"(@\";\""`
	Params []*gParam `parser:"(@@ (\",\" @@)*)?)?"`
}

type gParam struct {
	Pos     lexer.Position
	Name    *gIdent   `parser:"@@"`
	Type    *gIdent   `parser:"\":\" @@"`
	Default *gLiteral `parser:"(\"=\" @@)?"`
	EndPos  lexer.Position
}

type gLiteral struct {
	Pos    lexer.Position
	Neg    bool   `parser:"@\"-\"?"`
	Value  string `parser:"@(Float | Int | \"inf\" | \"true\" | \"false\")"`
	EndPos lexer.Position
}

type gTensorDecl struct {
	Pos    lexer.Position
	Name   *gIdent  `parser:"@@"`
	Type   *gIdent  `parser:"\":\" @@"`
	Ranked bool     `parser:"(@\"[\""`
	Shape  []*gExpr `parser:"(@@ (\",\" @@)*)? \"]\")?"`
	EndPos lexer.Position
}

type gDerived struct {
	Pos    lexer.Position
	Name   *gIdent `parser:"@@"`
	Value  *gExpr  `parser:"\"=\" @@"`
	EndPos lexer.Position
}

type gAttr struct {
	Pos     lexer.Position
	Name    *gIdent     `parser:"\"@\" @@"`
	HasArgs bool        `parser:"(@\"(\""`
	Args    []*gAttrArg `parser:"(@@ (\",\" @@)*)? \")\")?"`
	EndPos  lexer.Position
}

// gAttrArg is `value`, `[values]`, `key = value` or `key = [values]`.
type gAttrArg struct {
	Pos    lexer.Position
	First  *gAttrValue `parser:"( @@"`
	Second *gAttrList  `parser:"(\"=\" @@)?"`
	List   *gAttrList  `parser:"| @@ )"`
	EndPos lexer.Position
}

type gAttrList struct {
	Single *gAttrValue   `parser:"@@"`
	List   bool          `parser:"| @\"[\""`
	Values []*gAttrValue `parser:"(@@ (\",\" @@)*)? \"]\""`
}

type gAttrValue struct {
	Pos    lexer.Position
	Neg    bool   `parser:"@\"-\"?"`
	Value  string `parser:"@(Ident | Float | Int | String)"`
	EndPos lexer.Position
}

type gStmt struct {
	Pos     lexer.Position
	Let     bool          `parser:"@\"let\"?"`
	Name    *gIdent       `parser:"@@"`
	Indexed bool          `parser:"(@\"[\""`
	Index   []*gIndexItem `parser:"(@@ (\",\" @@)*)? \"]\")?"`
	Value   *gExpr        `parser:"\"=\" @@"`
	EndPos  lexer.Position
}

type gInstance struct {
	Pos      lexer.Position
	Name     *gIdent     `parser:"\"instance\" @@"`
	Kernel   *gIdent     `parser:"\"=\" @@"`
	Bindings []*gBinding `parser:"\"<\" (@@ (\",\" @@)*)? \">\""`
	EndPos   lexer.Position
}

type gBinding struct {
	Pos    lexer.Position
	Name   *gIdent   `parser:"@@"`
	Value  *gLiteral `parser:"\"=\" @@"`
	EndPos lexer.Position
}

// gIndexItem is an index expression, optionally with a half-open range
// (`k in 0..K`).
type gIndexItem struct {
	Pos    lexer.Position
	X      *gExpr `parser:"@@"`
	Lo     *gExpr `parser:"(\"in\" @@"`
	Hi     *gExpr `parser:"\"..\" @@)?"`
	EndPos lexer.Position
}

type gExpr struct {
	Pos    lexer.Position
	Cond   *gBinary `parser:"@@"`
	Then   *gExpr   `parser:"(\"?\" @@"`
	Else   *gExpr   `parser:"\":\" @@)?"`
	EndPos lexer.Position
}

type gBinary struct {
	Pos    lexer.Position
	Head   *gUnary   `parser:"@@"`
	Tail   []*gOpArg `parser:"@@*"`
	EndPos lexer.Position
}

type gOpArg struct {
	Pos lexer.Position
	Op  string  `parser:"@(\"||\" | \"&&\" | \"==\" | \"!=\" | \"<=\" | \">=\" | \"<\" | \">\" | \"+\" | \"-\" | \"*\" | \"/\" | \"%\")"`
	X   *gUnary `parser:"@@"`
}

type gUnary struct {
	Pos     lexer.Position
	Op      string    `parser:"(@(\"-\" | \"!\" | \"+\")"`
	X       *gUnary   `parser:"@@)"`
	Postfix *gPostfix `parser:"| @@"`
	EndPos  lexer.Position
}

type gPostfix struct {
	Pos     lexer.Position
	X       *gPrimary `parser:"@@"`
	Default *gUnary   `parser:"(\"??\" @@)?"`
	EndPos  lexer.Position
}

type gPrimary struct {
	Pos    lexer.Position
	Number string `parser:"@(Float | Int)"`
	Paren  *gExpr `parser:"| \"(\" @@ \")\""`
	Name   *gName `parser:"| @@"`
	EndPos lexer.Position
}

// gName is a variable, a tensor read `T[i, j]`, a call `f(x)` or a
// reduction `sum[k](x)`, told apart by the checker.
type gName struct {
	Pos     lexer.Position
	Name    string        `parser:"@Ident"`
	Indexed bool          `parser:"(@\"[\""`
	Index   []*gIndexItem `parser:"(@@ (\",\" @@)*)? \"]\")?"`
	Called  bool          `parser:"(@\"(\""`
	Args    []*gExpr      `parser:"(@@ (\",\" @@)*)? \")\")?"`
	EndPos  lexer.Position
}

var declParser = participle.MustBuild[gDecl](
	participle.Lexer(kgLexer),
	participle.Elide("Whitespace", "LineComment", "BlockComment"),
)
