//===- Formatter.cpp ------------------------------------------------------===//

#include "compiler/format/Formatter.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace pipec;

namespace {

/// One line of output inside a pipeline, before alignment.
struct Line {
  enum Kind { Setting, Stream, Buffer, Stage, Comment, Blank } kind;
  std::vector<std::string> columns; ///< Stream/Stage: the aligned columns
  std::string text;                 ///< Setting, Comment: the whole line
  std::string trailing;             ///< a comment after the item, same line
};

class Formatter {
public:
  Formatter(const ast::File &file, llvm::StringRef source)
      : file(file), source(source) {}

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
      out += commentText(nextComment) + '\n';
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
      out += commentText(nextComment) + '\n';
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

  std::string commentText(size_t i) const {
    const llvm::SMRange &r = file.comments[i];
    std::string text = source.slice(offset(r.Start), offset(r.End)).str();
    // Line comments lose trailing spaces (and a CR of a CRLF file).
    if (llvm::StringRef(text).startswith("//"))
      text = llvm::StringRef(text).rtrim(" \t\r\f\v").str();
    return text;
  }

  /// An amount or a count as written, in fmt's spacing.
  static std::string amountText(const ast::Amount &a) {
    std::string text;
    llvm::raw_string_ostream os(text);
    ast::print(a, os);
    return os.str();
  }
  static std::string countText(const ast::IntLit &n) {
    if (!n.expr)
      return std::to_string(n.value);
    std::string text;
    llvm::raw_string_ostream os(text);
    ast::print(*n.expr, os);
    return os.str();
  }

  /// Each item's text, by kind.
  static std::vector<std::string> streamColumns(const ast::StreamDecl &s) {
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
    return {s.name.text.str(), priority};
  }

  static std::vector<std::string> bufferColumns(const ast::BufferDecl &b) {
    std::string name = b.name.text.str();
    if (b.slots)
      name += "[" + countText(*b.slots) + "]";
    return {name, amountText(b.size), b.host ? "host" : "",
            b.state ? "state" : ""};
  }

  static std::vector<std::string> stageColumns(const ast::StageDecl &s) {
    std::string on = s.stream ? (llvm::Twine("on ") + s.stream->text).str() : "";
    std::string work = spelling(s.kind);
    if (s.kind == StageKind::Copy)
      work += std::string(" ") + spelling(s.direction);
    if (!s.amount.empty())
      work += " " + amountText(s.amount);
    std::string attrs;
    for (const ast::Attr &a : s.attrs) {
      attrs += attrs.empty() ? "[" : ", ";
      attrs += a.name.text;
      if (a.value)
        attrs += "=" + std::to_string(a.value->value);
      if (a.amount)
        attrs += "=" + amountText(*a.amount);
    }
    if (!attrs.empty())
      attrs += "]";
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
    return {s.name.text.str(), on, work, attrs, access, deps};
  }

  void pipeline(const ast::Pipeline &p) {
    out += (llvm::Twine("pipeline ") + p.name.text + " {\n").str();
    // Items in source order.
    struct Item {
      size_t start, end;
      Line line;
    };
    std::vector<Item> items;
    for (const ast::Setting &s : p.settings)
      items.push_back({offset(s.range.Start), offset(s.range.End),
                       {Line::Setting, {},
                        s.kind == ast::Setting::Sync
                            ? std::string(s.syncDeclared ? "sync declared;"
                                                         : "sync inferred;")
                            : "iterations " + countText(s.iterations) + ";",
                        ""}});
    for (const ast::LetDecl &l : p.constants)
      items.push_back({offset(l.range.Start), offset(l.range.End),
                       {Line::Setting, {},
                        (llvm::Twine("let ") + l.name.text + " = " + amountText(l.value) + ";")
                            .str(),
                        ""}});
    for (const ast::BufferDecl &b : p.buffers)
      items.push_back({offset(b.range.Start), offset(b.range.End),
                       {Line::Buffer, bufferColumns(b), "", ""}});
    for (const ast::StreamDecl &s : p.streams)
      items.push_back({offset(s.range.Start), offset(s.range.End),
                       {Line::Stream, streamColumns(s), "", ""}});
    for (const ast::StageDecl &s : p.stages)
      items.push_back({offset(s.range.Start), offset(s.range.End),
                       {Line::Stage, stageColumns(s), "", ""}});
    // Stable: an item added by an edit (compiler/format/Edit) sits at the
    // place of the one it follows.
    // (Most files list their kinds of items in order already: a generated
    // or imported one of a million stages is then not sorted at all.)
    auto before = [](const Item &a, const Item &b) { return a.start < b.start; };
    if (!std::is_sorted(items.begin(), items.end(), before))
      std::stable_sort(items.begin(), items.end(), before);

    std::vector<Line> lines;
    size_t cursor = offset(p.range.Start); // after the "{" line, roughly
    size_t bodyStart = cursor;
    const size_t end = offset(p.range.End);
    auto comment = [&](size_t i) {
      lines.push_back({Line::Comment, {}, commentText(i), ""});
    };
    for (const Item &item : items) {
      // Comments before this item (and any inside it, moved before it).
      for (; nextComment < file.comments.size() &&
             offset(file.comments[nextComment].Start) < item.end;
           ++nextComment) {
        size_t at = offset(file.comments[nextComment].Start);
        if (!lines.empty() && lines.back().kind != Line::Blank &&
            blankBetween(cursor, at))
          lines.push_back({Line::Blank, {}, "", ""});
        // A comment right after the previous item, on its line, trails it.
        if (!lines.empty() && cursor != bodyStart &&
            lines.back().kind != Line::Comment && lines.back().kind != Line::Blank &&
            lines.back().trailing.empty() && sameLine(cursor, at) &&
            at >= cursor) {
          lines.back().trailing = commentText(nextComment);
        } else {
          comment(nextComment);
        }
        cursor = offset(file.comments[nextComment].End);
      }
      if (!lines.empty() && lines.back().kind != Line::Blank &&
          blankBetween(cursor, item.start))
        lines.push_back({Line::Blank, {}, "", ""});
      lines.push_back(item.line);
      cursor = item.end;
    }
    // Comments after the last item, inside the pipeline.
    for (; nextComment < file.comments.size() &&
           offset(file.comments[nextComment].Start) < end;
         ++nextComment) {
      size_t at = offset(file.comments[nextComment].Start);
      if (!lines.empty() && lines.back().kind != Line::Comment &&
          lines.back().kind != Line::Blank && lines.back().trailing.empty() &&
          sameLine(cursor, at) && cursor != bodyStart) {
        lines.back().trailing = commentText(nextComment);
      } else {
        if (!lines.empty() && lines.back().kind != Line::Blank &&
            blankBetween(cursor, at))
          lines.push_back({Line::Blank, {}, "", ""});
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
      if (line.kind != Line::Stream && line.kind != Line::Stage &&
          line.kind != Line::Buffer) {
        if (line.kind != Line::Blank)
          out += "  " + line.text;
        if (!line.trailing.empty())
          out += " " + line.trailing;
        out += '\n';
        ++i;
        continue;
      }
      size_t j = i;
      while (j < lines.size() && lines[j].kind == line.kind)
        ++j;
      std::vector<size_t> width(line.columns.size(), 0);
      for (size_t k = i; k < j; ++k)
        for (size_t c = 0; c < width.size(); ++c)
          width[c] = std::max(width[c], lines[k].columns[c].size());
      for (size_t k = i; k < j; ++k) {
        std::string text = line.kind == Line::Stream   ? "stream"
                           : line.kind == Line::Buffer ? "buffer"
                                                       : "stage";
        const std::vector<std::string> &cols = lines[k].columns;
        std::string pending; // padding, written only if more follows
        for (size_t c = 0; c < cols.size(); ++c) {
          if (width[c] == 0)
            continue; // a column no line of the run uses
          if (!cols[c].empty()) {
            text += pending + " " + cols[c];
            pending = std::string(width[c] - cols[c].size(), ' ');
          } else {
            pending += std::string(width[c] + 1, ' ');
          }
        }
        out += "  " + text + ";";
        if (!lines[k].trailing.empty())
          out += " " + lines[k].trailing;
        out += '\n';
      }
      i = j;
    }
  }

  const ast::File &file;
  llvm::StringRef source;
  std::string out;
  size_t nextComment = 0;
};

} // namespace

std::string pipec::formatFile(const ast::File &file, llvm::StringRef source) {
  return Formatter(file, source).run();
}
