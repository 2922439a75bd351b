//! The tokens of Lua code, one at a time and without allocating: names,
//! keywords, numbers, quoted and long strings (with whether they hold escapes
//! or are broken), every operator; whitespace and comments (line and long) are
//! skipped. It lexes as tree-sitter-lua does where that differs from Lua
//! itself on broken code: a quoted string may span lines, and a name may hold
//! any character that is not an operator, a quote, a space or a control one.

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tok {
    /// A name (`global` included: the reader decides where it is a keyword).
    Name,
    /// A numeral.
    Number,
    /// A quoted or long string ([`Token::string`] says more).
    Str,
    And,
    Break,
    Do,
    Else,
    Elseif,
    End,
    False,
    For,
    Function,
    Goto,
    If,
    In,
    Local,
    Nil,
    Not,
    Or,
    Repeat,
    Return,
    Then,
    True,
    Until,
    While,
    /// A binary-only operator: `+ * / // % ^ & | << >> == ~= < <= > >= ..`
    /// (`<` and `>` also close and open attributes: see [`Tok::Lt`], [`Tok::Gt`]).
    BinOp,
    /// `-`, binary and unary.
    Minus,
    /// `~`, binary and unary.
    Tilde,
    /// `#`
    Hash,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `=`
    Assign,
    LParen,
    RParen,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    /// `::`
    DoubleColon,
    Semi,
    Colon,
    Comma,
    Dot,
    /// `...`
    Ellipsis,
    /// `*`, which `global *` also uses.
    Star,
    /// A byte no token starts with.
    Unknown,
    /// The end of the code.
    Eof,
}

/// What the reader needs of a string token.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct StrInfo {
    /// Where its text starts, after the opening delimiter.
    pub content_start: usize,
    /// Where its text ends, before the closing delimiter.
    pub content_end: usize,
    /// A long string (`[[ ]]`, `[==[ ]==]`).
    pub long: bool,
    /// It holds an escape sequence.
    pub escapes: bool,
    /// It holds an invalid escape sequence or is not closed.
    pub broken: bool,
}

/// One token with its byte range in the code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
    /// Set for [`Tok::Str`].
    pub string: StrInfo,
}

/// Reads tokens off Lua code.
#[derive(Debug, Clone)]
pub(crate) struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `code`, past a `#` line that opens it.
    pub fn new(code: &'a str) -> Self {
        let mut lexer = Lexer {
            src: code.as_bytes(),
            pos: 0,
        };
        lexer.skip_spaces();
        if lexer.at(0) == b'#' {
            lexer.skip_line();
        }
        lexer
    }

    fn at(&self, ahead: usize) -> u8 {
        self.src.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn done(&self) -> bool {
        self.pos >= self.src.len()
    }

    fn skip_spaces(&mut self) {
        while !self.done() && matches!(self.at(0), b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
            self.pos += 1;
        }
    }

    fn skip_line(&mut self) {
        while !self.done() && !matches!(self.at(0), b'\n' | b'\r') {
            self.pos += 1;
        }
    }

    /// Skips whitespace and comments.
    fn skip_trivia(&mut self) {
        loop {
            self.skip_spaces();
            if self.at(0) == b'-' && self.at(1) == b'-' {
                self.pos += 2;
                if let Some(level) = self.long_bracket_level() {
                    self.long_body(level);
                } else {
                    self.skip_line();
                }
            } else {
                return;
            }
        }
    }

    /// At `[` `=`* `[`: its level (the number of `=`), consumed.
    fn long_bracket_level(&mut self) -> Option<usize> {
        if self.at(0) != b'[' {
            return None;
        }
        let mut level = 0;
        while self.at(1 + level) == b'=' {
            level += 1;
        }
        if self.at(1 + level) != b'[' {
            return None;
        }
        self.pos += level + 2;
        Some(level)
    }

    /// Consumes a long bracket's body up to its closing bracket; returns where
    /// the body ends, or None when the code ends first.
    fn long_body(&mut self, level: usize) -> Option<usize> {
        while !self.done() {
            if self.at(0) == b']' {
                let end = self.pos;
                self.pos += 1;
                let mut equals = 0;
                while self.at(0) == b'=' {
                    equals += 1;
                    self.pos += 1;
                }
                if equals == level && self.at(0) == b']' {
                    self.pos += 1;
                    return Some(end);
                }
            } else {
                self.pos += 1;
            }
        }
        None
    }

    /// The next token ([`Tok::Eof`] at the end, for ever).
    pub fn next_token(&mut self) -> Token {
        self.skip_trivia();
        let start = self.pos;
        let mut string = StrInfo::default();
        let tok = if self.done() {
            Tok::Eof
        } else {
            self.token(&mut string)
        };
        Token {
            tok,
            start,
            end: self.pos,
            string,
        }
    }

    fn token(&mut self, string: &mut StrInfo) -> Tok {
        let c = self.at(0);
        if is_name_start(c) {
            return self.name();
        }
        if c.is_ascii_digit() || (c == b'.' && self.at(1).is_ascii_digit()) {
            self.number();
            return Tok::Number;
        }
        let (tok, len) = match (c, self.at(1)) {
            (b'"' | b'\'', _) => {
                self.quoted(c, string);
                return Tok::Str;
            }
            (b'[', _) => {
                if let Some(level) = self.long_bracket_level() {
                    string.long = true;
                    string.content_start = self.pos;
                    match self.long_body(level) {
                        Some(end) => string.content_end = end,
                        None => {
                            string.content_end = self.pos;
                            string.broken = true;
                        }
                    }
                    return Tok::Str;
                }
                (Tok::LBracket, 1)
            }
            (b'.', b'.') if self.at(2) == b'.' => (Tok::Ellipsis, 3),
            (b'.', b'.') => (Tok::BinOp, 2),
            (b'.', _) => (Tok::Dot, 1),
            (b'/', b'/') | (b'<', b'<' | b'=') | (b'>', b'>' | b'=') | (b'=' | b'~', b'=') => {
                (Tok::BinOp, 2)
            }
            (b'+' | b'/' | b'%' | b'^' | b'&' | b'|', _) => (Tok::BinOp, 1),
            (b'*', _) => (Tok::Star, 1),
            (b'-', _) => (Tok::Minus, 1),
            (b'~', _) => (Tok::Tilde, 1),
            (b'#', _) => (Tok::Hash, 1),
            (b'<', _) => (Tok::Lt, 1),
            (b'>', _) => (Tok::Gt, 1),
            (b'=', _) => (Tok::Assign, 1),
            (b'(', _) => (Tok::LParen, 1),
            (b')', _) => (Tok::RParen, 1),
            (b'{', _) => (Tok::LBrace, 1),
            (b'}', _) => (Tok::RBrace, 1),
            (b']', _) => (Tok::RBracket, 1),
            (b':', b':') => (Tok::DoubleColon, 2),
            (b':', _) => (Tok::Colon, 1),
            (b';', _) => (Tok::Semi, 1),
            (b',', _) => (Tok::Comma, 1),
            _ => (Tok::Unknown, 1),
        };
        self.pos += len;
        tok
    }

    fn name(&mut self) -> Tok {
        let start = self.pos;
        while !self.done() && is_name_continue(self.at(0)) {
            self.pos += 1;
        }
        keyword(&self.src[start..self.pos]).unwrap_or(Tok::Name)
    }

    /// A decimal or hexadecimal numeral, with a fraction and an exponent.
    fn number(&mut self) {
        let hex = self.at(0) == b'0' && matches!(self.at(1), b'x' | b'X');
        if hex {
            self.pos += 2;
        }
        let digit = |c: u8| {
            if hex {
                c.is_ascii_hexdigit()
            } else {
                c.is_ascii_digit()
            }
        };
        let exponent: &[u8] = if hex { b"pP" } else { b"eE" };
        while digit(self.at(0)) {
            self.pos += 1;
        }
        if self.at(0) == b'.' && self.at(1) != b'.' {
            self.pos += 1;
            while digit(self.at(0)) {
                self.pos += 1;
            }
        }
        if exponent.contains(&self.at(0)) {
            let sign = usize::from(matches!(self.at(1), b'+' | b'-'));
            if self.at(1 + sign).is_ascii_digit() {
                self.pos += 1 + sign;
                while self.at(0).is_ascii_digit() {
                    self.pos += 1;
                }
            }
        }
    }

    /// A string in `quote`s; may span lines, ends with the code when not closed.
    fn quoted(&mut self, quote: u8, string: &mut StrInfo) {
        self.pos += 1;
        string.content_start = self.pos;
        while !self.done() {
            match self.at(0) {
                c if c == quote => {
                    string.content_end = self.pos;
                    self.pos += 1;
                    return;
                }
                b'\\' => {
                    string.escapes = true;
                    self.pos += 1;
                    if !self.escape() {
                        string.broken = true;
                    }
                }
                _ => self.pos += 1,
            }
        }
        string.content_end = self.pos;
        string.broken = true;
    }

    /// Consumes an escape sequence after its backslash; false when invalid.
    fn escape(&mut self) -> bool {
        match self.at(0) {
            b'\n' | b'a' | b'b' | b'f' | b'n' | b'r' | b't' | b'v' | b'\\' | b'\'' | b'"' => {
                self.pos += 1;
                true
            }
            b'z' => {
                self.pos += 1;
                self.skip_spaces();
                true
            }
            b'0'..=b'9' => {
                let mut n = 0;
                while n < 3 && self.at(0).is_ascii_digit() {
                    self.pos += 1;
                    n += 1;
                }
                true
            }
            b'x' if self.at(1).is_ascii_hexdigit() && self.at(2).is_ascii_hexdigit() => {
                self.pos += 3;
                true
            }
            b'u' if self.at(1) == b'{' && self.at(2).is_ascii_hexdigit() => {
                let mut n = 2;
                while self.at(n).is_ascii_hexdigit() {
                    n += 1;
                }
                if self.at(n) != b'}' {
                    return false;
                }
                self.pos += n + 1;
                true
            }
            _ => false,
        }
    }
}

/// A byte a name may start with: not a digit, an operator, a quote, a space or
/// a control character (bytes of non-ASCII characters included).
fn is_name_start(c: u8) -> bool {
    is_name_continue(c) && !c.is_ascii_digit()
}

fn is_name_continue(c: u8) -> bool {
    c >= 0x80 || c.is_ascii_alphanumeric() || matches!(c, b'_' | b'!' | b'$' | b'?' | b'@' | b'`')
}

fn keyword(name: &[u8]) -> Option<Tok> {
    Some(match name {
        b"and" => Tok::And,
        b"break" => Tok::Break,
        b"do" => Tok::Do,
        b"else" => Tok::Else,
        b"elseif" => Tok::Elseif,
        b"end" => Tok::End,
        b"false" => Tok::False,
        b"for" => Tok::For,
        b"function" => Tok::Function,
        b"goto" => Tok::Goto,
        b"if" => Tok::If,
        b"in" => Tok::In,
        b"local" => Tok::Local,
        b"nil" => Tok::Nil,
        b"not" => Tok::Not,
        b"or" => Tok::Or,
        b"repeat" => Tok::Repeat,
        b"return" => Tok::Return,
        b"then" => Tok::Then,
        b"true" => Tok::True,
        b"until" => Tok::Until,
        b"while" => Tok::While,
        _ => return None,
    })
}
