# Writes the bytes of INPUT (or none when INPUT is empty) into OUTPUT as a C++ array
# `const unsigned char VARIABLE[]` ending in a zero byte, with `VARIABLE_size` its length
# without that byte. Run with cmake -P.
if(INPUT)
  file(READ "${INPUT}" hex HEX)
else()
  set(hex "")
endif()
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}"
  "// Generated at build time from ${INPUT}; do not edit.\n"
  "#include <cstddef>\n"
  "extern const unsigned char ${VARIABLE}[];\n"
  "extern const std::size_t ${VARIABLE}_size;\n"
  "const unsigned char ${VARIABLE}[] = {\n${bytes}0x00};\n"
  "const std::size_t ${VARIABLE}_size = ${size};\n")
