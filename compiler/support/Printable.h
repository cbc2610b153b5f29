//===- Printable.h - Text from input, made safe for a terminal ------------===//
//
// A file name, a trace's device or kernel name, a profile's `name`: text
// that comes from input and reaches a terminal must not carry control
// characters (ESC ] 0 ; ... BEL sets the title, ESC [ 2 J clears the
// screen, OSC 52 writes the clipboard). Every such text goes through
// printable() where it enters pipec.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_SUPPORT_PRINTABLE_H
#define PIPEC_SUPPORT_PRINTABLE_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace pipec {

/// `text` with every C0 control character (tab included), DEL, and every C1
/// control character (U+0080-U+009F, as UTF-8) written as \xNN, and a
/// backslash as \\: what it shows is unambiguous, and nothing in it acts on
/// a terminal. Other bytes, valid UTF-8 or not, are kept.
std::string printable(llvm::StringRef text);

/// Whether printable(text) would change it.
bool needsEscaping(llvm::StringRef text);

} // namespace pipec

#endif // PIPEC_SUPPORT_PRINTABLE_H
