"""The parser's diagnostics (P codes), one constructor per problem: the message and hint are
written here once, and the parser passes facts -- the file, where, what it found.  The checker's
are in declaration_errors, statement_errors and type_errors (as cel-go's ``checker/errors.go``).
"""

from __future__ import annotations

from .diagnostics import Diagnostic, Span


# -- P001 syntax error ---------------------------------------------------------------------------

def unexpected_character(file: str, at: Span, char: str) -> Diagnostic:
    return Diagnostic("P001", f"unexpected character {char!r}", file, at)


def unexpected_end_of_file(file: str, at: Span, expected: str) -> Diagnostic:
    """``expected``: what the grammar would have taken there, described for people."""
    return Diagnostic("P001", "unexpected end of file", file, at, hint=f"expected {expected}")


def unexpected_indentation(file: str, at: Span) -> Diagnostic:
    return Diagnostic("P001", "unexpected indentation", file, at,
                      hint="a line is indented only inside a block (after a line ending with ':')")


def unexpected_token(file: str, at: Span, found: str, expected: str) -> Diagnostic:
    """``found`` and ``expected``: the token met and what the grammar would have taken, described."""
    return Diagnostic("P001", f"unexpected {found}", file, at, hint=f"expected {expected}")


# -- P002 inconsistent indentation --------------------------------------------------------------

def inconsistent_indentation(file: str, line: int, reason: object) -> Diagnostic:
    """``reason``: the indenter's account of the dedent it could not match."""
    return Diagnostic("P002", f"inconsistent indentation: {reason}", file, Span(line, 1))


# -- P003 bad escape in a string ------------------------------------------------------------------
# These are raised while the tree is built, before the file is known: each takes the file last.

def escape_needs_hex_digits(at: Span, kind: str, digits: int, file: str) -> Diagnostic:
    return Diagnostic("P003", f"\\{kind} needs exactly {digits} hexadecimal digits", file, at)


def escape_needs_braced_name(at: Span, file: str) -> Diagnostic:
    return Diagnostic("P003", "\\N needs a character name in braces, e.g. \\N{BULLET}", file, at)


def unknown_character_name(at: Span, name: str, file: str) -> Diagnostic:
    return Diagnostic("P003", f"unknown character name {name!r} in \\N{{...}}", file, at)


def unknown_escape(at: Span, kind: str, file: str) -> Diagnostic:
    return Diagnostic("P003", f"unknown escape \\{kind}", file, at)


def beyond_unicode(at: Span, value: int, file: str) -> Diagnostic:
    return Diagnostic("P003", f"U+{value:X} is beyond the last Unicode character U+10FFFF", file, at)


def surrogate(at: Span, value: int, file: str) -> Diagnostic:
    return Diagnostic("P003", f"U+{value:X} is a surrogate, not a character", file, at)


# -- P004 number literal out of range -----------------------------------------------------------

def integer_out_of_range(at: Span, largest: int, file: str) -> Diagnostic:
    return Diagnostic("P004", f"integer literal out of range (the largest is {largest})", file, at)


def float_out_of_range(at: Span, file: str) -> Diagnostic:
    return Diagnostic("P004", "number literal out of range (larger than the largest float, 1.8e308)", file, at)


# -- P005 nested too deeply, P006 reserved name -------------------------------------------------

def nested_too_deeply(file: str, at: Span, limit: int) -> Diagnostic:
    return Diagnostic("P005", f"this nests more than {limit} levels deep", file, at,
                      hint="split it up: name the parts with `let`, or a `def`")


def reserved_name(file: str, at: Span, name: str) -> Diagnostic:
    return Diagnostic("P006", f"'{name}' is reserved: names cannot start with two underscores", file, at)


# -- P007 file or line too long ------------------------------------------------------------------

def file_too_long(file: str, chars: int, limit: int) -> Diagnostic:
    return Diagnostic("P007", f"this file has {chars:,} characters; a policy file may have at most {limit:,}",
                      file, Span(1, 1), hint="split it into modules (`use`)")


def line_too_long(file: str, line: int, chars: int, limit: int) -> Diagnostic:
    return Diagnostic("P007", f"this line has {chars:,} characters; a line (and so a string literal) may have "
                      f"at most {limit:,}", file, Span(line, limit + 1))
