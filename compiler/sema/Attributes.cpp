//===- Attributes.cpp - A stage's attributes, from one table --------------===//
//
// Which attributes a stage of each kind takes (kAttributes: a new one is a
// row), and each one's value: the grid, shared memory, dispatch time,
// recorded graphs, when a stage runs.
//
//===----------------------------------------------------------------------===//

#include "compiler/sema/Checker.h"

using namespace pipec;
using namespace pipec::program;
using namespace pipec::sema;
using llvm::formatv;

namespace {

/// Which stages an attribute is for.
enum class AttrTakers {
  Kernels,  ///< kernel stages (the grid and what a block holds)
  Copies,   ///< copy stages (their host memory)
  Launches, ///< every stage launched on a stream (not a cpu stage)
  All,      ///< every stage (when it runs)
};

/// Every attribute a stage may carry, in the order suggestions prefer.
struct AttrRule {
  const char *name;
  AttrTakers takers;
};
constexpr AttrRule kAttributes[] = {
    {"blocks", AttrTakers::Kernels},   {"threads", AttrTakers::Kernels},
    {"smem", AttrTakers::Kernels},     {"regs", AttrTakers::Kernels},
    {"bytes", AttrTakers::Kernels},    {"bound", AttrTakers::Kernels},
    {"dynamic", AttrTakers::Launches}, {"issue", AttrTakers::Launches},
    {"graph", AttrTakers::Launches},   {"pageable", AttrTakers::Copies},
    {"first", AttrTakers::All},        {"last", AttrTakers::All},
    {"every", AttrTakers::All},
};

const AttrRule *attributeNamed(llvm::StringRef name) {
  for (const AttrRule &rule : kAttributes)
    if (name == rule.name)
      return &rule;
  return nullptr;
}

bool takes(AttrTakers takers, StageKind kind) {
  switch (takers) {
  case AttrTakers::Kernels:
    return kind == StageKind::Kernel;
  case AttrTakers::Copies:
    return kind == StageKind::Copy;
  case AttrTakers::Launches:
    return !onHostThread(kind);
  case AttrTakers::All:
    return true;
  }
  return false;
}

} // namespace

void Sema::checkAttrs(const ast::StageDecl &s, Stage &into) {
  bool isKernel = into.kind() == StageKind::Kernel;
  bool isCpu = onHostThread(into.kind());
  llvm::StringMap<const ast::Attr *> seen;
  for (const ast::Attr &a : s.attrs) {
    llvm::StringRef name = a.name.text;
    const AttrRule *rule = attributeNamed(name);
    if (!rule) {
      std::vector<llvm::StringRef> valid;
      for (const AttrRule &r : kAttributes)
        if (takes(r.takers, into.kind()))
          valid.push_back(r.name);
      std::optional<size_t> near = sema::suggestName(name, valid);
      diags.error(a.name.range(), near
                                      ? formatv("unknown attribute '{0}'; did you mean '{1}'?",
                                                name, valid[*near])
                                            .str()
                                      : formatv("unknown attribute '{0}'", name).str());
      continue;
    }
    // Given twice: the first one counts.
    auto redefined = [&] {
      auto [it, inserted] = seen.try_emplace(name, &a);
      if (!inserted)
        diags.error(a.name.range(), formatv("redefinition of attribute '{0}'", name))
            .attachNote(it->second->name.range(), kPrevious);
      return !inserted;
    };
    if (rule->takers == AttrTakers::All) {
      if (!redefined())
        checkRunCondition(a, into);
      continue;
    }
    // A cpu stage is neither a launch nor a graph node: no other attribute.
    if (isCpu) {
      diags.error(a.name.range(),
                  formatv("unknown attribute '{0}' for a cpu stage; a cpu stage is "
                          "host work, not a launch, and takes only 'first', 'last' and "
                          "'every'",
                          name));
      continue;
    }
    if (!takes(rule->takers, into.kind())) {
      diags.error(a.name.range(),
                  formatv("unknown attribute '{0}' for a {1} stage; only "
                          "{2} stages take '{0}'",
                          name, spelling(into.kind()),
                          rule->takers == AttrTakers::Copies ? "copy" : "kernel"));
      continue;
    }
    if (redefined())
      continue;
    if (name == "dynamic") {
      takesNoValue(a);
      into.dynamic = true;
      continue;
    }
    if (name == "smem") {
      checkSharedMemory(a, into);
      continue;
    }
    if (name == "bytes") {
      needsVersion(7, a.name.range(), "'bytes='");
      if (std::optional<uint64_t> bytes = sizeAttribute(a, "bytes=64MiB"))
        into.kernel().bytes = std::max<uint64_t>(*bytes, 1);
      continue;
    }
    if (name == "bound") {
      checkBound(a, into);
      continue;
    }
    if (name == "issue") {
      checkIssue(a, into);
      continue;
    }
    if (name == "graph") {
      checkRecordedGraph(a, into);
      continue;
    }
    if (name == "pageable") {
      checkPageable(a, into);
      continue;
    }
    AttrNumber given = wholeNumberOf(a);
    const llvm::SMRange at = given.at;
    if (given.reported)
      continue;
    if (a.amount() && !given.value) {
      diags.error(at, formatv("attribute '{0}' takes a whole number, not '{1}'", name,
                              sourceText(at)));
      continue;
    }
    if (!given.value) {
      diags.error(a.name.range(), formatv("attribute '{0}' needs a value, as in '{0}={1}'",
                                          name, name == "blocks" ? 132 : 256));
      continue;
    }
    uint64_t max = name == "blocks"    ? kMaxBlocks
                   : name == "threads" ? kMaxThreads
                                       : kMaxRegisters;
    if (*given.value < 1 || *given.value > max) {
      diags.error(at, formatv("{0} must be between 1 and {1}", name, max));
      continue;
    }
    uint32_t value = static_cast<uint32_t>(*given.value);
    (name == "blocks"    ? into.kernel().blocks
     : name == "threads" ? into.kernel().threads
                         : into.kernel().regs) = value;
  }
  if (isKernel && profile.blocksPerSM(into.kernel().threads, into.kernel().smemBytes,
                                      into.kernel().regs) == 0) {
    diags.error(into.range, formatv("one block of kernel '{0}' ({1} threads, {2} registers "
                                    "each, {3} bytes of shared memory) does not fit on one "
                                    "SM, which has {4} threads, {5} registers and {6} bytes "
                                    "of shared memory",
                                    into.name, into.kernel().threads, into.kernel().regs,
                                    into.kernel().smemBytes, profile.maxThreadsPerSM,
                                    profile.registersPerSM, profile.sharedMemoryPerSM));
    return;
  }
  if (isKernel)
    checkWaves(s, into);
}

/// `kernel T` with its grid: in version 1, T was one block's time (the
/// kernel takes T per wave); since version 2 it is the whole kernel's, and
/// a wave of blocks under a microsecond says the file may mean the old.
void Sema::checkWaves(const ast::StageDecl &s, Stage &into) {
  const uint64_t waves = profile.waves(into.kernel());
  if (version == 1) {
    const double whole = into.durationUs * double(waves);
    if (whole > sema::kMaxTimeUs) {
      diags.error(s.amount.range(),
                  formatv("kernel '{0}': one block's {1} over {2} waves is more than the "
                          "3600s a stage may take",
                          into.name, formatTime(into.durationUs), waves));
      return;
    }
    into.durationUs = whole;
    return;
  }
  // A wave's blocks start one after another on each SM and must retire
  // before the next wave's start: real kernels of many waves take 0.5us a
  // wave and more (the fastest in recorded A100 and V100 traces: 0.50us, a
  // 3ms grid of 6,007 waves). Under a quarter of a microsecond no real
  // kernel is, and a version-1 file's one-block time usually is.
  const double wave = into.durationUs / double(waves);
  if (waves > 1 && wave < kLeastWaveUs)
    diags.warning(s.amount.range(),
                  formatv("kernel '{0}' takes {1} in {2} waves of blocks, {3} each: a wave "
                          "under 250ns is implausible; 'kernel T' is the whole kernel's time "
                          "(version 1 read it as one block's: write 'version 1;' first if "
                          "the file means that)",
                          into.name, formatTime(into.durationUs), waves, formatTime(wave)));
}

/// `[first]`, `[last]`, `[every=K]`: the iterations the stage runs in.
void Sema::checkRunCondition(const ast::Attr &a, Stage &into) {
  const llvm::StringRef name = a.name.text;
  if (name != "every") {
    if (!takesNoValue(a))
      (name == "first" ? into.runs.first : into.runs.last) = true;
    return;
  }
  AttrNumber k = wholeNumberOf(a);
  if (k.reported)
    return;
  if (!k.value || *k.value < 1 || *k.value > kMaxIterations) {
    diags.error(k.at, formatv("attribute 'every' takes a whole number of iterations from 1 "
                              "to {0}, as in 'every=5'",
                              kMaxIterations));
    return;
  }
  into.runs.every = static_cast<uint32_t>(*k.value);
}

/// `dynamic`, `first`, `last`: an error (true) when given a value.
bool Sema::takesNoValue(const ast::Attr &a) {
  if (!a.value() && !a.amount())
    return false;
  diags.error(a.value() ? a.value()->range : a.amount()->range(),
              formatv("attribute '{0}' takes no value", a.name.text));
  return true;
}

/// `blocks=264`, or an expression that comes out a plain whole number.
Sema::AttrNumber Sema::wholeNumberOf(const ast::Attr &a) {
  AttrNumber out;
  out.at = a.name.range();
  if (a.value()) {
    out.value = a.value()->value;
    out.at = a.value()->range;
  } else if (a.amount()) {
    out.at = a.amount()->range();
    sema::Quantity q = constants->quantityOf(*a.amount());
    out.reported = q.kind == sema::Quantity::Invalid;
    if (q.kind == sema::Quantity::Bare && q.number >= 0 && sema::isWhole(q.number))
      out.value = q.number < 9e18 ? static_cast<uint64_t>(std::llround(q.number)) : UINT64_MAX;
  }
  return out;
}

/// `pageable` (version 6): the copy's host side is pageable memory (a
/// copy to or from the host; its wait is the stage after it, made by the
/// caller). Its time, when sized, is set once its size is known.
void Sema::checkPageable(const ast::Attr &a, Stage &into) {
  needsVersion(6, a.name.range(), "'pageable'");
  if (takesNoValue(a))
    return;
  const CopyDirection direction = into.copy().direction;
  if (direction != CopyDirection::H2D && direction != CopyDirection::D2H) {
    diags.error(a.name.range(),
                formatv("attribute 'pageable' is for a copy to or from host memory (h2d, "
                        "d2h); a {0} copy moves none",
                        spelling(direction)));
    return;
  }
  into.copy().pageable = true;
}

/// `graph=N` (version 5): the stage is a node of recorded graph launch N.
void Sema::checkRecordedGraph(const ast::Attr &a, Stage &into) {
  needsVersion(5, a.name.range(), "'graph='");
  if (isCollective(into)) {
    diags.error(a.name.range(),
                formatv("collective '{0}' cannot be a node of a recorded graph: its parts "
                        "are launched on each device's stream",
                        into.name));
    return;
  }
  AttrNumber given = wholeNumberOf(a);
  if (given.reported)
    return;
  if (!given.value || *given.value > uint64_t(INT32_MAX)) {
    diags.error(given.value ? given.at : a.name.range(),
                formatv("attribute 'graph' takes the number of the graph launch (0 to {0}), "
                        "as in 'graph=3'",
                        INT32_MAX));
    return;
  }
  into.graph = int64_t(*given.value);
}

/// `issue=30us`: the host's dispatch time before each launch.
void Sema::checkIssue(const ast::Attr &a, Stage &into) {
  needsVersion(3, a.name.range(), "'issue='");
  if (!a.amount()) {
    diags.error(a.value() ? a.value()->range : a.name.range(),
                formatv("attribute 'issue' expects a time ({0}), as in 'issue=30us'",
                        sema::timeUnitList()));
    return;
  }
  sema::Quantity q = constants->quantityOf(*a.amount());
  if (q.kind == sema::Quantity::Invalid)
    return;
  if (q.kind != sema::Quantity::Time) {
    diags.error(a.amount()->range(),
                formatv("attribute 'issue' expects a time ({0}), not '{1}'",
                        sema::timeUnitList(), sourceText(a.amount()->range())));
    return;
  }
  if (q.tooLarge) {
    diags.error(a.amount()->range(), "time must be at most 3600s");
    return;
  }
  into.issueUs = q.micros;
}

/// `smem=N` (bytes) or `smem=48KiB`: shared memory per block.
std::optional<uint64_t> Sema::sizeAttribute(const ast::Attr &a, llvm::StringRef example) {
  AttrNumber number = wholeNumberOf(a);
  if (number.reported)
    return std::nullopt;
  if (number.value)
    return *number.value; // a number of bytes
  if (!a.amount()) {
    diags.error(a.name.range(),
                formatv("attribute '{0}' needs a value, as in '{1}'", a.name.text, example));
    return std::nullopt;
  }
  sema::Quantity q = constants->quantityOf(*a.amount());
  if (q.kind != sema::Quantity::Size || q.fractionalBytes) {
    diags.error(number.at, formatv("attribute '{0}' expects a size ({1}) or a "
                                   "number of bytes",
                                   a.name.text, sema::sizeUnitList()));
    return std::nullopt;
  }
  return q.tooLarge ? UINT64_MAX : q.bytes;
}

/// `bound=memory` or `bound=compute`: what the kernel's speed rests on.
void Sema::checkBound(const ast::Attr &a, Stage &into) {
  needsVersion(7, a.name.range(), "'bound='");
  const llvm::SMRange value = a.value()    ? a.value()->range
                              : a.amount() ? a.amount()->range()
                                           : llvm::SMRange();
  const llvm::StringRef given = value.isValid() ? sourceText(value) : "";
  if (given == "memory" || given == "compute") {
    into.kernel().bound =
        given == "memory" ? program::KernelBound::Memory : program::KernelBound::Compute;
    return;
  }
  if (given.empty())
    diags.error(a.name.range(), "attribute 'bound' needs a value: 'bound=memory' or "
                                "'bound=compute'");
  else {
    const std::vector<llvm::StringRef> valid = {"memory", "compute"};
    std::optional<size_t> near = sema::suggestName(given, valid);
    diags.error(
        value,
        formatv("attribute 'bound' takes 'memory' or 'compute', not '{0}'{1}", given,
                near ? formatv("; did you mean '{0}'?", valid[*near]).str() : std::string()));
  }
}

void Sema::checkSharedMemory(const ast::Attr &a, Stage &into) {
  std::optional<uint64_t> given = sizeAttribute(a, "smem=48KiB");
  if (!given)
    return;
  const uint64_t bytes = *given;
  const llvm::SMRange range = a.value() ? a.value()->range : a.amount()->range();
  if (bytes > profile.sharedMemoryPerBlock) {
    diags.error(range, formatv("smem must be at most {0} bytes (the device's "
                               "shared memory per block)",
                               profile.sharedMemoryPerBlock));
    return;
  }
  into.kernel().smemBytes = bytes;
}
