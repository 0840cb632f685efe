# cmake -DIN=FILE -DOUT=FILE.inc -P EmbedText.cmake: FILE as the body of a
# C++ raw string literal (`R"RANKC(...)RANKC"`), for #include.
file(READ "${IN}" text)
file(WRITE "${OUT}.tmp" "R\"RANKC(${text})RANKC\"\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
