//===- Kinds.cpp - Spellings and traits, from StageKinds.def --------------===//

#include "compiler/support/Kinds.h"

using namespace pipec;

const char *pipec::spelling(StageKind kind) {
  switch (kind) {
#define STAGE_KIND(Name, Keyword, Version, Noun, OnHostThread)                                \
  case StageKind::Name:                                                                       \
    return Keyword;
#include "compiler/support/StageKinds.def"
  }
  return "?";
}

const char *pipec::spelling(CopyDirection dir) {
  switch (dir) {
#define COPY_DIRECTION(Name, Keyword, Version)                                                \
  case CopyDirection::Name:                                                                   \
    return Keyword;
#include "compiler/support/StageKinds.def"
  }
  return "?";
}

const char *pipec::spelling(CollectiveOp op) {
  switch (op) {
#define COLLECTIVE_OP(Name, Keyword)                                                          \
  case CollectiveOp::Name:                                                                    \
    return Keyword;
#include "compiler/support/StageKinds.def"
  }
  return "?";
}

unsigned pipec::versionOf(StageKind kind) {
  switch (kind) {
#define STAGE_KIND(Name, Keyword, Version, Noun, OnHostThread)                                \
  case StageKind::Name:                                                                       \
    return Version;
#include "compiler/support/StageKinds.def"
  }
  return 1;
}

unsigned pipec::versionOf(CopyDirection dir) {
  switch (dir) {
#define COPY_DIRECTION(Name, Keyword, Version)                                                \
  case CopyDirection::Name:                                                                   \
    return Version;
#include "compiler/support/StageKinds.def"
  }
  return 1;
}

const char *pipec::nounOf(StageKind kind) {
  switch (kind) {
#define STAGE_KIND(Name, Keyword, Version, Noun, OnHostThread)                                \
  case StageKind::Name:                                                                       \
    return Noun;
#include "compiler/support/StageKinds.def"
  }
  return "?";
}

bool pipec::onHostThread(StageKind kind) {
  switch (kind) {
#define STAGE_KIND(Name, Keyword, Version, Noun, OnHostThread)                                \
  case StageKind::Name:                                                                       \
    return OnHostThread;
#include "compiler/support/StageKinds.def"
  }
  return false;
}
