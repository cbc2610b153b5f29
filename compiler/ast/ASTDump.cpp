//===- ASTDump.cpp - The `--emit=ast` dump ---------------------------------===//

#include "compiler/ast/AST.h"

#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <functional>

using namespace pipec;
using namespace pipec::ast;

namespace {
class Dumper {
public:
  Dumper(const File &file, const llvm::SourceMgr &sm, llvm::raw_ostream &os)
      : file(file), sm(sm), os(os) {}

  void dumpFile() {
    os << "File '" << file.path << "'\n";
    if (file.version) {
      indent(1);
      os << "Version " << file.version->value;
      loc(file.versionRange);
    }
    for (const Pipeline &p : file.pipelines)
      dumpPipeline(p);
  }

private:
  void indent(unsigned depth) { os.indent(depth * 2); }

  void loc(llvm::SMRange range) {
    if (!range.Start.isValid()) {
      os << " @<invalid>\n";
      return;
    }
    auto [line, col] = lineAndColumn(range.Start);
    os << " @" << file.path << ':' << line << ':' << col << '\n';
  }

  /// SourceMgr finds a column by scanning back to the line's start: on one
  /// long line that is quadratic over the nodes. The start of every line is
  /// found once instead, and each lookup is a binary search.
  std::pair<unsigned, unsigned> lineAndColumn(llvm::SMLoc loc) {
    unsigned id = sm.FindBufferContainingLoc(loc);
    if (id == 0)
      return {0, 0};
    llvm::StringRef text = sm.getMemoryBuffer(id)->getBuffer();
    if (id != lineBuffer) {
      lineBuffer = id;
      lineStarts.assign(1, 0);
      for (size_t i = 0; i < text.size(); ++i)
        if (text[i] == '\n')
          lineStarts.push_back(i + 1);
    }
    size_t offset = static_cast<size_t>(loc.getPointer() - text.data());
    auto it = std::upper_bound(lineStarts.begin(), lineStarts.end(), offset);
    size_t line = static_cast<size_t>(it - lineStarts.begin());
    return {static_cast<unsigned>(line), static_cast<unsigned>(offset - *(it - 1) + 1)};
  }
  unsigned lineBuffer = 0;
  std::vector<size_t> lineStarts;

  void dumpPipeline(const Pipeline &p) {
    indent(1);
    os << "Pipeline '" << p.name.text << "'";
    loc(p.name.range());
    // Items in source order, whatever their kind.
    std::vector<std::pair<const char *, std::function<void()>>> items;
    for (const Setting &s : p.settings)
      items.push_back({s.range.Start.getPointer(), [&] {
                         indent(2);
                         if (s.kind == Setting::Sync) {
                           os << "Sync " << (s.syncDeclared ? "declared" : "inferred");
                         } else {
                           os << "Iterations ";
                           print(s.iterations, os);
                         }
                         loc(s.range);
                       }});
    for (const LetDecl &l : p.constants)
      items.push_back({l.range.Start.getPointer(), [&] {
                         indent(2);
                         os << "Let '" << l.name.text << "' = ";
                         print(l.value, os);
                         loc(l.name.range());
                       }});
    for (const DeviceDecl &d : p.devices)
      items.push_back({d.range.Start.getPointer(), [&] {
                         indent(2);
                         os << "Device '" << d.name.text << "'";
                         loc(d.name.range());
                       }});
    for (const StreamDecl &s : p.streams)
      items.push_back({s.range.Start.getPointer(), [&] { dumpStream(s); }});
    for (const BufferDecl &b : p.buffers)
      items.push_back({b.range.Start.getPointer(), [&] {
                         indent(2);
                         os << "Buffer '" << b.name.text << "'";
                         if (b.slots) {
                           os << " slots=";
                           print(*b.slots, os);
                         }
                         os << ' ';
                         print(b.size, os);
                         if (b.host)
                           os << " host";
                         if (b.device)
                           os << " on '" << b.device->text << "'";
                         if (b.state)
                           os << " state";
                         loc(b.name.range());
                       }});
    for (const StageDecl &s : p.stages)
      items.push_back({s.range.Start.getPointer(), [&] { dumpStage(s); }});
    std::stable_sort(items.begin(), items.end(), [](const auto &a, const auto &b) {
      return std::less<const char *>()(a.first, b.first);
    });
    for (auto &item : items)
      item.second();
  }

  void dumpStream(const StreamDecl &s) {
    indent(2);
    os << "Stream '" << s.name.text << "'";
    if (s.device)
      os << " on '" << s.device->text << "'";
    switch (s.priority.kind) {
    case PriorityKind::Default:
      break;
    case PriorityKind::High:
      os << " priority=high";
      break;
    case PriorityKind::Normal:
      os << " priority=normal";
      break;
    case PriorityKind::Low:
      os << " priority=low";
      break;
    case PriorityKind::Raw:
      os << " priority=" << s.priority.raw;
      break;
    }
    loc(s.name.range());
  }

  void dumpStage(const StageDecl &s) {
    indent(2);
    os << "Stage '" << s.name.text << "'";
    if (s.stream && s.streamList) {
      os << " on ('" << s.stream->text << "'";
      for (const Name &more : s.moreStreams)
        os << ", '" << more.text << "'";
      os << ')';
    } else if (s.stream) {
      os << " on '" << s.stream->text << "'";
    }
    os << ' ' << (s.kind == StageKind::Collective ? spelling(s.collective) : spelling(s.kind));
    if (s.kind == StageKind::Copy)
      os << ' ' << spelling(s.direction);
    if (!s.amount.empty()) {
      os << ' ';
      print(s.amount, os);
    }
    if (s.peer)
      os << " to '" << s.peer->text << "'";
    loc(s.name.range());
    for (const Attr &a : s.attrs) {
      indent(3);
      os << "Attr '" << a.name.text << "'";
      if (a.value())
        os << " = " << a.value()->value;
      if (a.amount()) {
        os << " = ";
        print(*a.amount(), os);
      }
      loc(a.name.range());
    }
    for (const Access &a : s.accesses)
      for (size_t i = 0; i < a.buffers.size(); ++i) {
        const Name &b = a.buffers[i];
        indent(3);
        os << (a.write ? "Writes '" : "Reads '") << b.text << "'";
        if (const Qualifier *q = a.qualifierOf(i)) {
          os << ' ' << q->text;
          if (q->distance)
            os << '(' << q->distance->value << ')';
        }
        loc(b.range());
      }
    for (const Dep &d : s.deps) {
      indent(3);
      os << "DependsOn '" << d.stage.text << "'";
      if (d.qualifier)
        os << ' ' << d.qualifier->text;
      if (d.qualifier && d.qualifier->distance)
        os << '(' << d.qualifier->distance->value << ')';
      loc(d.stage.range());
    }
  }

  const File &file;
  const llvm::SourceMgr &sm;
  llvm::raw_ostream &os;
};
} // namespace

void ast::dump(const File &file, const llvm::SourceMgr &sm, llvm::raw_ostream &os) {
  Dumper(file, sm, os).dumpFile();
}
