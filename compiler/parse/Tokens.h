//===- Tokens.h - Kinds of tokens the parser's pieces ask about (internal) ===//
#ifndef PIPEC_PARSE_TOKENS_H
#define PIPEC_PARSE_TOKENS_H

#include "PipeParser.h"

namespace pipec::parse {

/// Tokens that may stand for a name: identifiers and contextual keywords.
inline bool isNameToken(size_t type) {
  switch (type) {
  case PipeParser::IDENT:
  case PipeParser::KERNEL:
  case PipeParser::COPY:
  case PipeParser::HOST:
  case PipeParser::MEMSET:
  case PipeParser::CPU:
  case PipeParser::H2D:
  case PipeParser::D2H:
  case PipeParser::D2D:
  case PipeParser::P2P:
  case PipeParser::TO:
  case PipeParser::ALLREDUCE:
  case PipeParser::ALLGATHER:
  case PipeParser::REDUCESCATTER:
  case PipeParser::BROADCAST:
  case PipeParser::HIGH:
  case PipeParser::NORMAL:
  case PipeParser::LOW:
  case PipeParser::SYNC:
  case PipeParser::INFERRED:
  case PipeParser::DECLARED:
  case PipeParser::READS:
  case PipeParser::WRITES:
  case PipeParser::STATE:
  case PipeParser::VERSION:
  case PipeParser::LET:
    return true;
  default:
    return false;
  }
}

/// The reserved words, which can never be names.
inline bool isReservedWord(size_t type) {
  switch (type) {
  case PipeParser::PIPELINE:
  case PipeParser::STREAM:
  case PipeParser::STAGE:
  case PipeParser::ON:
  case PipeParser::DEPENDS_ON:
  case PipeParser::PRIORITY:
  case PipeParser::ITERATIONS:
  case PipeParser::BUFFER:
  case PipeParser::DEVICE:
    return true;
  default:
    return false;
  }
}

} // namespace pipec::parse

#endif // PIPEC_PARSE_TOKENS_H
