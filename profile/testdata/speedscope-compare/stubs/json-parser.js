// uint8array-json-parser: the same result through JSON.parse.
exports.JSON_parse = u8 => JSON.parse(new TextDecoder().decode(u8))
