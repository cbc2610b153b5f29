//===- Formatter.cpp ------------------------------------------------------===//

#include "compiler/format/Formatter.h"

#include "compiler/format/Columns.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace pipec;

namespace {

/// One line of output inside a pipeline, before alignment. Its text is
/// slices of the source or of the formatter's arena: a file of a million
/// stages makes no string per column.
struct Line {
  enum Kind { Setting, Stream, Buffer, Stage, Comment, Blank } kind;
  uint32_t firstCell = 0, cells = 0; ///< Stream/Stage/Buffer: the aligned columns
  llvm::StringRef text;              ///< Setting, Comment: the whole line
  llvm::StringRef trailing;          ///< a comment after the item, same line
};

class Formatter {
public:
  Formatter(const ast::File &file, llvm::StringRef source) : file(file), source(source) {}

  std::string run() {
    size_t cursor = 0; // the end of what is written, in the source
    if (file.version) {
      // The version line first (after any comment above it), then a
      // blank line.
      commentsBefore(offset(file.versionRange.Start), cursor);
      out += "version " + std::to_string(file.version->value) + ";\n";
      cursor = offset(file.versionRange.End);
    }
    for (size_t i = 0; i < file.pipelines.size(); ++i) {
      const ast::Pipeline &p = file.pipelines[i];
      if (i > 0 || file.version)
        out += '\n'; // one blank line between pipelines, and after the version
      commentsBefore(offset(p.range.Start), cursor);
      pipeline(p);
      cursor = offset(p.range.End);
    }
    // Comments after the last pipeline.
    for (; nextComment < file.comments.size(); ++nextComment) {
      size_t at = offset(file.comments[nextComment].Start);
      if (!out.empty() && blankBetween(cursor, at))
        out += '\n';
      out += commentText(nextComment);
      out += '\n';
      cursor = offset(file.comments[nextComment].End);
    }
    return out;
  }

private:
  /// The top-level comments before offset `start`, as they were grouped
  /// (a blank line kept where the source had one, and before `start`).
  void commentsBefore(size_t start, size_t &cursor) {
    bool wrote = false;
    for (; nextComment < file.comments.size() &&
           offset(file.comments[nextComment].Start) < start;
         ++nextComment) {
      size_t at = offset(file.comments[nextComment].Start);
      if (wrote && blankBetween(cursor, at))
        out += '\n';
      out += commentText(nextComment);
      out += '\n';
      cursor = offset(file.comments[nextComment].End);
      wrote = true;
    }
    if (wrote && blankBetween(cursor, start))
      out += '\n';
  }

  size_t offset(llvm::SMLoc loc) const {
    return static_cast<size_t>(loc.getPointer() - source.data());
  }

  /// Whether the source between two offsets holds an empty line.
  bool blankBetween(size_t from, size_t to) const {
    if (to <= from)
      return false;
    llvm::StringRef gap = source.slice(from, to);
    size_t newlines = gap.count('\n');
    return newlines >= 2;
  }

  /// Whether offsets a and b are on one line of the source.
  bool sameLine(size_t a, size_t b) const {
    if (b < a)
      std::swap(a, b);
    return source.slice(a, b).find('\n') == llvm::StringRef::npos;
  }

  llvm::StringRef commentText(size_t i) const {
    const llvm::SMRange &r = file.comments[i];
    llvm::StringRef text = source.slice(offset(r.Start), offset(r.End));
    // Line comments lose trailing spaces (and a CR of a CRLF file).
    if (text.startswith("//"))
      text = text.rtrim(" \t\r\f\v");
    return text;
  }

  /// An amount or a count as written, in fmt's spacing, added to `to`.
  static void addAmount(std::string &to, const ast::Amount &a) {
    if (!a.expr) {
      to.append(a.number.data(), a.number.size());
      to.append(a.unit.data(), a.unit.size());
      return;
    }
    llvm::raw_string_ostream os(to);
    ast::print(a, os);
    os.flush();
  }
  static std::string countText(const ast::IntLit &n) {
    std::string text;
    llvm::raw_string_ostream os(text);
    ast::print(n, os);
    return os.str();
  }

  /// `text` kept in the arena.
  llvm::StringRef keep(const std::string &text) { return saver.save(text); }
  /// A line of aligned columns, each kept (or a slice of the source).
  Line cellsLine(Line::Kind kind, std::initializer_list<llvm::StringRef> columns) {
    Line line{kind,
              static_cast<uint32_t>(cells.size()),
              static_cast<uint32_t>(columns.size()),
              {},
              {}};
    cells.insert(cells.end(), columns.begin(), columns.end());
    return line;
  }

  /// Each item's line, by kind.
  Line streamLine(const ast::StreamDecl &s) {
    std::string priority;
    switch (s.priority.kind) {
    case ast::PriorityKind::Default:
      break;
    case ast::PriorityKind::High:
      priority = "priority high";
      break;
    case ast::PriorityKind::Normal:
      priority = "priority normal";
      break;
    case ast::PriorityKind::Low:
      priority = "priority low";
      break;
    case ast::PriorityKind::Raw:
      priority = "priority " + std::to_string(s.priority.raw);
      break;
    }
    llvm::StringRef on;
    if (s.device)
      on = keep("on " + s.device->text.str());
    return cellsLine(Line::Stream, {s.name.text, on, keep(priority)});
  }

  Line bufferLine(const ast::BufferDecl &b) {
    llvm::StringRef name = b.name.text;
    if (b.slots)
      name = keep(name.str() + "[" + countText(*b.slots) + "]");
    scratch.clear();
    addAmount(scratch, b.size);
    llvm::StringRef where = b.host ? "host" : "";
    if (b.device)
      where = keep("on " + b.device->text.str());
    return cellsLine(Line::Buffer, {name, keep(scratch), where, b.state ? "state" : ""});
  }

  Line stageLine(const ast::StageDecl &s) {
    llvm::StringRef on;
    if (s.stream) {
      scratch.assign(s.streamList ? "on (" : "on ");
      scratch.append(s.stream->text.data(), s.stream->text.size());
      for (const ast::Name &more : s.moreStreams) {
        scratch += ", ";
        scratch.append(more.text.data(), more.text.size());
      }
      if (s.streamList)
        scratch += ')';
      on = keep(scratch);
    }
    std::string &work = scratch;
    work.assign(s.kind == StageKind::Collective ? spelling(s.collective) : spelling(s.kind));
    if (s.kind == StageKind::Copy) {
      work += ' ';
      work += spelling(s.direction);
    }
    if (!s.amount.empty()) {
      work += ' ';
      addAmount(work, s.amount);
    }
    if (s.peer) {
      work += " to ";
      work.append(s.peer->text.data(), s.peer->text.size());
    }
    llvm::StringRef workText = keep(work);
    std::string &attrs = scratch;
    attrs.clear();
    for (const ast::Attr &a : s.attrs) {
      attrs += attrs.empty() ? "[" : ", ";
      attrs.append(a.name.text.data(), a.name.text.size());
      if (a.value())
        attrs += "=" + std::to_string(a.value()->value);
      if (a.amount()) {
        attrs += '=';
        addAmount(attrs, *a.amount());
      }
    }
    if (!attrs.empty())
      attrs += "]";
    llvm::StringRef attrsText = keep(attrs);
    std::string access;
    for (const ast::Access &a : s.accesses) {
      access += access.empty() ? "" : " ";
      access += a.write ? "writes(" : "reads(";
      for (size_t i = 0; i < a.buffers.size(); ++i) {
        access += (llvm::Twine(i ? ", " : "") + a.buffers[i].text).str();
        if (const ast::Qualifier *q = a.qualifierOf(i)) {
          access += q->text.str();
          if (q->distance)
            access += "(" + std::to_string(q->distance->value) + ")";
        }
      }
      access += ")";
    }
    std::string deps;
    for (const ast::Dep &d : s.deps) {
      deps += deps.empty() ? "depends_on(" : ", ";
      deps += (llvm::Twine(d.stage.text) + (d.qualifier ? d.qualifier->text : "")).str();
      if (d.qualifier && d.qualifier->distance)
        deps += "(" + std::to_string(d.qualifier->distance->value) + ")";
    }
    if (!deps.empty())
      deps += ")";
    return cellsLine(Line::Stage,
                     {s.name.text, on, workText, attrsText, keep(access), keep(deps)});
  }

  void pipeline(const ast::Pipeline &p) {
    out += (llvm::Twine("pipeline ") + p.name.text + " {\n").str();
    // Items in source order.
    struct Item {
      size_t start, end;
      Line line;
    };
    std::vector<Item> items;
    auto textLine = [&](const std::string &text) {
      return Line{Line::Setting, 0, 0, keep(text), {}};
    };
    for (const ast::Setting &s : p.settings)
      items.push_back(
          {offset(s.range.Start), offset(s.range.End),
           textLine(s.kind == ast::Setting::Sync
                        ? std::string(s.syncDeclared ? "sync declared;" : "sync inferred;")
                        : "iterations " + countText(s.iterations) + ";")});
    for (const ast::LetDecl &l : p.constants) {
      std::string text = "let " + l.name.text.str() + " = ";
      addAmount(text, l.value);
      items.push_back({offset(l.range.Start), offset(l.range.End), textLine(text + ";")});
    }
    for (const ast::BufferDecl &b : p.buffers)
      items.push_back({offset(b.range.Start), offset(b.range.End), bufferLine(b)});
    for (const ast::DeviceDecl &d : p.devices)
      items.push_back({offset(d.range.Start), offset(d.range.End),
                       textLine("device " + d.name.text.str() + ";")});
    for (const ast::StreamDecl &s : p.streams)
      items.push_back({offset(s.range.Start), offset(s.range.End), streamLine(s)});
    items.reserve(items.size() + p.stages.size());
    for (const ast::StageDecl &s : p.stages)
      items.push_back({offset(s.range.Start), offset(s.range.End), stageLine(s)});
    // Stable: an item added by an edit (compiler/format/Edit) sits at the
    // place of the one it follows.
    // (Most files list their kinds of items in order already: a generated
    // or imported one of a million stages is then not sorted at all.)
    auto before = [](const Item &a, const Item &b) { return a.start < b.start; };
    if (!std::is_sorted(items.begin(), items.end(), before))
      std::stable_sort(items.begin(), items.end(), before);

    std::vector<Line> lines;
    lines.reserve(items.size());
    size_t cursor = offset(p.range.Start); // after the "{" line, roughly
    size_t bodyStart = cursor;
    const size_t end = offset(p.range.End);
    auto comment = [&](size_t i) {
      lines.push_back({Line::Comment, 0, 0, commentText(i), {}});
    };
    for (const Item &item : items) {
      // Comments before this item (and any inside it, moved before it).
      for (; nextComment < file.comments.size() &&
             offset(file.comments[nextComment].Start) < item.end;
           ++nextComment) {
        size_t at = offset(file.comments[nextComment].Start);
        if (!lines.empty() && lines.back().kind != Line::Blank && blankBetween(cursor, at))
          lines.push_back({Line::Blank, 0, 0, {}, {}});
        // A comment right after the previous item, on its line, trails it.
        if (!lines.empty() && cursor != bodyStart && lines.back().kind != Line::Comment &&
            lines.back().kind != Line::Blank && lines.back().trailing.empty() &&
            sameLine(cursor, at) && at >= cursor) {
          lines.back().trailing = commentText(nextComment);
        } else {
          comment(nextComment);
        }
        cursor = offset(file.comments[nextComment].End);
      }
      if (!lines.empty() && lines.back().kind != Line::Blank &&
          blankBetween(cursor, item.start))
        lines.push_back({Line::Blank, 0, 0, {}, {}});
      lines.push_back(item.line);
      cursor = item.end;
    }
    // Comments after the last item, inside the pipeline.
    for (;
         nextComment < file.comments.size() && offset(file.comments[nextComment].Start) < end;
         ++nextComment) {
      size_t at = offset(file.comments[nextComment].Start);
      if (!lines.empty() && lines.back().kind != Line::Comment &&
          lines.back().kind != Line::Blank && lines.back().trailing.empty() &&
          sameLine(cursor, at) && cursor != bodyStart) {
        lines.back().trailing = commentText(nextComment);
      } else {
        if (!lines.empty() && lines.back().kind != Line::Blank && blankBetween(cursor, at))
          lines.push_back({Line::Blank, 0, 0, {}, {}});
        comment(nextComment);
      }
      cursor = offset(file.comments[nextComment].End);
    }
    while (!lines.empty() && lines.back().kind == Line::Blank)
      lines.pop_back();
    writeAligned(lines);
    out += "}\n";
  }

  /// Writes lines, aligning the columns of each run of consecutive streams
  /// or stages.
  void writeAligned(const std::vector<Line> &lines) {
    for (size_t i = 0; i < lines.size();) {
      const Line &line = lines[i];
      if (line.kind != Line::Stream && line.kind != Line::Stage && line.kind != Line::Buffer) {
        if (line.kind != Line::Blank) {
          out += "  ";
          out += line.text;
        }
        if (!line.trailing.empty()) {
          out += ' ';
          out += line.trailing;
        }
        out += '\n';
        ++i;
        continue;
      }
      size_t j = i;
      while (j < lines.size() && lines[j].kind == line.kind)
        ++j;
      auto cellsOf = [&](const Line &l) {
        return llvm::ArrayRef<llvm::StringRef>(cells).slice(l.firstCell, l.cells);
      };
      Columns columns(line.cells);
      for (size_t k = i; k < j; ++k)
        columns.fit(cellsOf(lines[k]));
      const char *keyword = line.kind == Line::Stream   ? "stream"
                            : line.kind == Line::Buffer ? "buffer"
                                                        : "stage";
      for (size_t k = i; k < j; ++k)
        columns.write(out, keyword, cellsOf(lines[k]), lines[k].trailing);
      i = j;
    }
  }

  const ast::File &file;
  llvm::StringRef source;
  llvm::BumpPtrAllocator arena;
  llvm::StringSaver saver{arena};
  std::vector<llvm::StringRef> cells; ///< every line's columns, in turn
  std::string scratch;                ///< a column being built
  std::string out;
  size_t nextComment = 0;
};

} // namespace

std::string pipec::formatFile(const ast::File &file, llvm::StringRef source) {
  return Formatter(file, source).run();
}
