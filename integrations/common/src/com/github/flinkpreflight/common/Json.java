package com.github.flinkpreflight.common;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The little JSON the plugins need (RFC 8259), because a plugin jar should not bring a JSON
 * library into the operator. Values map to {@code Map<String, Object>} (insertion ordered),
 * {@code List<Object>}, {@code String}, {@code BigDecimal}, {@code Boolean} and {@code null}.
 */
final class Json {

    /** Deeper documents are refused, so a hostile answer cannot exhaust the stack. */
    static final int MAX_DEPTH = 128;

    private Json() {}

    /** A document that is not JSON (the message names the character offset) or not the expected shape. */
    static final class ParseException extends Exception {
        private static final long serialVersionUID = 1L;

        ParseException(String what, int offset) {
            super("malformed JSON at character " + offset + ": " + what);
        }

        /** Well-formed JSON of the wrong shape. */
        ParseException(String what) {
            super(what);
        }
    }

    // ---------------------------------------------------------------------------------------
    // Encoding

    static String write(Object value) {
        StringBuilder sb = new StringBuilder();
        write(sb, value);
        return sb.toString();
    }

    private static void write(StringBuilder sb, Object v) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof String) {
            writeString(sb, (String) v);
        } else if (v instanceof Boolean) {
            sb.append(v.toString());
        } else if (v instanceof Integer || v instanceof Long || v instanceof BigDecimal) {
            sb.append(v.toString());
        } else if (v instanceof Map) {
            sb.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                if (!first) {
                    sb.append(',');
                }
                first = false;
                writeString(sb, String.valueOf(e.getKey()));
                sb.append(':');
                write(sb, e.getValue());
            }
            sb.append('}');
        } else if (v instanceof Collection) {
            sb.append('[');
            boolean first = true;
            for (Object o : (Collection<?>) v) {
                if (!first) {
                    sb.append(',');
                }
                first = false;
                write(sb, o);
            }
            sb.append(']');
        } else {
            throw new IllegalArgumentException("cannot encode " + v.getClass().getName());
        }
    }

    private static void writeString(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"':
                    sb.append("\\\"");
                    break;
                case '\\':
                    sb.append("\\\\");
                    break;
                case '\n':
                    sb.append("\\n");
                    break;
                case '\r':
                    sb.append("\\r");
                    break;
                case '\t':
                    sb.append("\\t");
                    break;
                default:
                    // Control characters, and U+2028/2029 which some JavaScript parsers reject.
                    if (c < 0x20 || c == '\u2028' || c == '\u2029') {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
            }
        }
        sb.append('"');
    }

    // ---------------------------------------------------------------------------------------
    // Parsing

    static Object parse(String text) throws ParseException {
        Parser p = new Parser(text);
        p.skipSpace();
        Object v = p.value(0);
        p.skipSpace();
        if (p.pos != text.length()) {
            throw new ParseException("unexpected content after the value", p.pos);
        }
        return v;
    }

    /** Parses text, which must hold a JSON object; what names the document in the error. */
    static Map<?, ?> parseObject(String text, String what) throws ParseException {
        Object o = parse(text);
        if (!(o instanceof Map)) {
            throw new ParseException(what + " is not a JSON object");
        }
        return (Map<?, ?>) o;
    }

    /** A field that must be an array, empty when absent; what names it in the error. */
    static List<?> arrayOrEmpty(Object v, String what) throws ParseException {
        if (v == null) {
            return List.of();
        }
        if (!(v instanceof List)) {
            throw new ParseException(what + " is not an array");
        }
        return (List<?>) v;
    }

    private static final class Parser {
        private final String s;
        private int pos;

        Parser(String s) {
            this.s = s;
        }

        void skipSpace() {
            while (pos < s.length()) {
                char c = s.charAt(pos);
                if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                    return;
                }
                pos++;
            }
        }

        Object value(int depth) throws ParseException {
            if (depth > MAX_DEPTH) {
                throw new ParseException("nesting deeper than " + MAX_DEPTH, pos);
            }
            if (pos >= s.length()) {
                throw new ParseException("unexpected end of input", pos);
            }
            char c = s.charAt(pos);
            switch (c) {
                case '{':
                    return object(depth);
                case '[':
                    return array(depth);
                case '"':
                    return string();
                case 't':
                    literal("true");
                    return Boolean.TRUE;
                case 'f':
                    literal("false");
                    return Boolean.FALSE;
                case 'n':
                    literal("null");
                    return null;
                default:
                    if (c == '-' || (c >= '0' && c <= '9')) {
                        return number();
                    }
                    throw new ParseException("unexpected character '" + c + "'", pos);
            }
        }

        private void literal(String word) throws ParseException {
            if (!s.startsWith(word, pos)) {
                throw new ParseException("expected " + word, pos);
            }
            pos += word.length();
        }

        private Map<String, Object> object(int depth) throws ParseException {
            Map<String, Object> m = new LinkedHashMap<>();
            pos++; // {
            skipSpace();
            if (peek() == '}') {
                pos++;
                return m;
            }
            while (true) {
                skipSpace();
                if (peek() != '"') {
                    throw new ParseException("expected a member name", pos);
                }
                String key = string();
                skipSpace();
                expect(':');
                skipSpace();
                m.put(key, value(depth + 1));
                skipSpace();
                char c = peek();
                pos++;
                if (c == '}') {
                    return m;
                }
                if (c != ',') {
                    throw new ParseException("expected ',' or '}'", pos - 1);
                }
            }
        }

        private List<Object> array(int depth) throws ParseException {
            List<Object> l = new ArrayList<>();
            pos++; // [
            skipSpace();
            if (peek() == ']') {
                pos++;
                return l;
            }
            while (true) {
                skipSpace();
                l.add(value(depth + 1));
                skipSpace();
                char c = peek();
                pos++;
                if (c == ']') {
                    return l;
                }
                if (c != ',') {
                    throw new ParseException("expected ',' or ']'", pos - 1);
                }
            }
        }

        private String string() throws ParseException {
            int start = pos;
            pos++; // "
            StringBuilder sb = null;
            int runStart = pos;
            while (true) {
                if (pos >= s.length()) {
                    throw new ParseException("unterminated string", start);
                }
                char c = s.charAt(pos);
                if (c == '"') {
                    String run = s.substring(runStart, pos);
                    pos++;
                    return sb == null ? run : sb.append(run).toString();
                }
                if (c < 0x20) {
                    throw new ParseException("control character in string", pos);
                }
                if (c != '\\') {
                    pos++;
                    continue;
                }
                if (sb == null) {
                    sb = new StringBuilder();
                }
                sb.append(s, runStart, pos);
                pos++;
                if (pos >= s.length()) {
                    throw new ParseException("unterminated escape", pos);
                }
                char e = s.charAt(pos++);
                switch (e) {
                    case '"':
                    case '\\':
                    case '/':
                        sb.append(e);
                        break;
                    case 'b':
                        sb.append('\b');
                        break;
                    case 'f':
                        sb.append('\f');
                        break;
                    case 'n':
                        sb.append('\n');
                        break;
                    case 'r':
                        sb.append('\r');
                        break;
                    case 't':
                        sb.append('\t');
                        break;
                    case 'u':
                        if (pos + 4 > s.length()) {
                            throw new ParseException("short \\u escape", pos - 2);
                        }
                        int cp = 0;
                        for (int i = 0; i < 4; i++) {
                            int d = Character.digit(s.charAt(pos + i), 16);
                            if (d < 0) {
                                throw new ParseException("bad \\u escape", pos - 2);
                            }
                            cp = cp * 16 + d;
                        }
                        pos += 4;
                        sb.append((char) cp);
                        break;
                    default:
                        throw new ParseException("bad escape '\\" + e + "'", pos - 2);
                }
                runStart = pos;
            }
        }

        private BigDecimal number() throws ParseException {
            int start = pos;
            if (peek() == '-') {
                pos++;
            }
            if (peek() == '0') {
                pos++;
            } else if (isDigit(peek())) {
                digits();
            } else {
                throw new ParseException("bad number", start);
            }
            if (peek() == '.') {
                pos++;
                if (!isDigit(peek())) {
                    throw new ParseException("bad number: digit expected after '.'", pos);
                }
                digits();
            }
            if (peek() == 'e' || peek() == 'E') {
                pos++;
                if (peek() == '+' || peek() == '-') {
                    pos++;
                }
                if (!isDigit(peek())) {
                    throw new ParseException("bad number: digit expected in exponent", pos);
                }
                digits();
            }
            try {
                return new BigDecimal(s.substring(start, pos));
            } catch (NumberFormatException ex) { // exponent beyond int range
                throw new ParseException("number out of range", start);
            }
        }

        private void digits() {
            while (isDigit(peek())) {
                pos++;
            }
        }

        private static boolean isDigit(char c) {
            return c >= '0' && c <= '9';
        }

        /** The current character, or 0 at the end (never valid where peek is used). */
        private char peek() {
            return pos < s.length() ? s.charAt(pos) : 0;
        }

        private void expect(char c) throws ParseException {
            if (peek() != c) {
                throw new ParseException("expected '" + c + "'", pos);
            }
            pos++;
        }
    }
}
