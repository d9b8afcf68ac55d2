package pull

// OpenUnguarded is Open without its guard against a panic, for the fuzz
// test, which must see one.
var OpenUnguarded = open
