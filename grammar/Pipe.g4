// The .pipe language (docs/language.md; version 5: data, the host thread, state,
// devices, recorded graphs), with
// an optional first line naming the version a file was written for, and
// constants (`let`) with arithmetic wherever a number goes.
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
item       : setting | deviceDecl | streamDecl | bufferDecl | stageDecl | letDecl ;
deviceDecl : DEVICE name SEMI ;
letDecl    : LET IDENT ASSIGN amount SEMI ;
setting    : ITERATIONS expr SEMI
           | SYNC (INFERRED | DECLARED) SEMI
           ;
bufferDecl : BUFFER name (LBRACK expr RBRACK)? amount (HOST | ON name)? STATE? SEMI ;
streamDecl : STREAM name (ON name)? (PRIORITY priority)? SEMI ;
priority   : HIGH | NORMAL | LOW | MINUS? INT ;
stageDecl  : STAGE name (ON (name | LPAREN name (COMMA name)* RPAREN))? work attrs? access* deps?
             SEMI ;
work       : KERNEL amount
           | COPY direction amount? (TO name)?
           | HOST amount
           | MEMSET amount
           | CPU amount
           | collective amount
           ;
collective : ALLREDUCE | ALLGATHER | REDUCESCATTER | BROADCAST ;
access     : (READS | WRITES) LPAREN accessItem (COMMA accessItem)* RPAREN ;
accessItem : name (QUALIFIER (LPAREN INT RPAREN)?)? ;
direction  : H2D | D2H | D2D | P2P ;
// A number, a constant or arithmetic over them, maybe followed by a unit
// (`2*L us`); a unit written right after a number (`12us`) is one token.
amount     : expr IDENT? ;
expr       : expr (STAR | SLASH) expr
           | expr (PLUS | MINUS) expr
           | LPAREN expr RPAREN
           | QUANTITY | INT | DECIMAL | IDENT
           ;
attrs      : LBRACK attr (COMMA attr)* RBRACK ;
attr       : name (ASSIGN amount)? ;
deps       : DEPENDS_ON LPAREN dep (COMMA dep)* RPAREN ;
dep        : name (QUALIFIER (LPAREN INT RPAREN)?)? ;

// Contextual keywords are ordinary names wherever a name is expected.
name       : IDENT | KERNEL | COPY | HOST | MEMSET | CPU | H2D | D2H | D2D | HIGH | NORMAL
           | LOW | SYNC | INFERRED | DECLARED | READS | WRITES | STATE | VERSION | LET
           | P2P | TO | ALLREDUCE | ALLGATHER | REDUCESCATTER | BROADCAST ;

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
DEVICE     : 'device' ;

// Contextual keywords.
KERNEL     : 'kernel' ;
COPY       : 'copy' ;
HOST       : 'host' ;
MEMSET     : 'memset' ;
CPU        : 'cpu' ;
H2D        : 'h2d' ;
D2H        : 'd2h' ;
D2D        : 'd2d' ;
P2P        : 'p2p' ;
TO         : 'to' ;
ALLREDUCE  : 'allreduce' ;
ALLGATHER  : 'allgather' ;
REDUCESCATTER : 'reducescatter' ;
BROADCAST  : 'broadcast' ;
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
LET        : 'let' ;

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
PLUS       : '+' ;
STAR       : '*' ;
SLASH      : '/' ;

WS            : [ \t\r\n\f\u000B]+ -> skip ;
LINE_COMMENT  : '//' ~[\r\n]* -> channel(HIDDEN) ;
// An unterminated comment runs to the end of the file; the token source reports it.
BLOCK_COMMENT : '/*' .*? ('*/' | EOF) -> channel(HIDDEN) ;
// Any character that starts no token; the token source reports it and drops it.
BAD_CHAR      : . -> channel(HIDDEN) ;

fragment DIGITS : [0-9]+ ;
