# Writes OUT: a C file with src/api/assets/eunha.css as a string, so the
# binary carries its own stylesheet (src/api/web_page.c serves it).
file(READ ${SRC} hex HEX)
string(LENGTH "${hex}" hexlen)
math(EXPR len "${hexlen} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "/* Generated from src/api/assets/eunha.css by cmake/embed_assets.cmake. */\n"
  "#include <stddef.h>\n"
  "const char eu_web_css[] = {${bytes}0};\n"
  "const size_t eu_web_css_len = ${len};\n")
