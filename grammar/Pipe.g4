// The .pipe language (LANGUAGE.md, version 3: data, the host thread; state), with
// an optional first line naming the version a file was written for.
//
// ANTLR generates only the lexer and the parser from this file; the AST is built by
// hand-written functions in compiler/parse/ASTBuilder.cpp, one per parser rule.
grammar Pipe;

// ---------------------------------------------------------------------------
// Parser rules. Rule names are read by compiler/parse/SyntaxErrors.cpp to word
// "expected ... after/in ..." messages: keep the two in step.
// ---------------------------------------------------------------------------

file       : versionDecl? pipeline* EOF ;
versionDecl : VERSION INT SEMI ;
pipeline   : PIPELINE name LBRACE item* RBRACE ;
item       : setting | streamDecl | bufferDecl | stageDecl ;
setting    : ITERATIONS INT SEMI
           | SYNC (INFERRED | DECLARED) SEMI
           ;
bufferDecl : BUFFER name (LBRACK INT RBRACK)? amount HOST? STATE? SEMI ;
streamDecl : STREAM name (PRIORITY priority)? SEMI ;
priority   : HIGH | NORMAL | LOW | MINUS? INT ;
stageDecl  : STAGE name (ON name)? work attrs? access* deps? SEMI ;
work       : KERNEL amount
           | COPY direction amount?
           | HOST amount
           | MEMSET amount
           | CPU amount
           ;
access     : (READS | WRITES) LPAREN accessItem (COMMA accessItem)* RPAREN ;
accessItem : name (QUALIFIER (LPAREN INT RPAREN)?)? ;
direction  : H2D | D2H | D2D ;
amount     : QUANTITY | INT | DECIMAL ;
attrs      : LBRACK attr (COMMA attr)* RBRACK ;
attr       : name (ASSIGN (INT | QUANTITY))? ;
deps       : DEPENDS_ON LPAREN dep (COMMA dep)* RPAREN ;
dep        : name (QUALIFIER (LPAREN INT RPAREN)?)? ;

// Contextual keywords are ordinary names wherever a name is expected.
name       : IDENT | KERNEL | COPY | HOST | MEMSET | CPU | H2D | D2H | D2D | HIGH | NORMAL
           | LOW | SYNC | INFERRED | DECLARED | READS | WRITES | STATE | VERSION ;

// ---------------------------------------------------------------------------
// Lexer rules.
// ---------------------------------------------------------------------------

// Reserved keywords.
PIPELINE   : 'pipeline' ;
STREAM     : 'stream' ;
STAGE      : 'stage' ;
ON         : 'on' ;
DEPENDS_ON : 'depends_on' ;
PRIORITY   : 'priority' ;
ITERATIONS : 'iterations' ;
BUFFER     : 'buffer' ;

// Contextual keywords.
KERNEL     : 'kernel' ;
COPY       : 'copy' ;
HOST       : 'host' ;
MEMSET     : 'memset' ;
CPU        : 'cpu' ;
H2D        : 'h2d' ;
D2H        : 'd2h' ;
D2D        : 'd2d' ;
HIGH       : 'high' ;
NORMAL     : 'normal' ;
LOW        : 'low' ;
SYNC       : 'sync' ;
INFERRED   : 'inferred' ;
DECLARED   : 'declared' ;
READS      : 'reads' ;
WRITES     : 'writes' ;
STATE      : 'state' ;
VERSION    : 'version' ;

// '@prev'; any other word after '@' is diagnosed by the AST builder.
QUALIFIER  : '@' [A-Za-z_] [A-Za-z0-9_]* ;
// A number directly followed by a unit; the unit is checked by the AST builder.
QUANTITY   : DIGITS ('.' DIGITS)? [A-Za-z_] [A-Za-z0-9_]* ;
DECIMAL    : DIGITS '.' DIGITS ;
INT        : DIGITS ;
IDENT      : [A-Za-z_] [A-Za-z0-9_]* ;

LBRACE     : '{' ;
RBRACE     : '}' ;
LPAREN     : '(' ;
RPAREN     : ')' ;
LBRACK     : '[' ;
RBRACK     : ']' ;
SEMI       : ';' ;
COMMA      : ',' ;
ASSIGN     : '=' ;
MINUS      : '-' ;

WS            : [ \t\r\n\f\u000B]+ -> skip ;
LINE_COMMENT  : '//' ~[\r\n]* -> channel(HIDDEN) ;
// An unterminated comment runs to the end of the file; the token source reports it.
BLOCK_COMMENT : '/*' .*? ('*/' | EOF) -> channel(HIDDEN) ;
// Any character that starts no token; the token source reports it and drops it.
BAD_CHAR      : . -> channel(HIDDEN) ;

fragment DIGITS : [0-9]+ ;
