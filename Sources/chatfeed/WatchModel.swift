import ChatfeedClient
import ChatModel

/// What `chatfeed watch` shows: the subscription's rows as the client's updates leave them, the
/// marks of rows that just moved, arrived or changed, and the list's counters. Pure: updates in,
/// frames (lines of text) out.
struct WatchModel {
    enum Mark: String {
        case movedUp = "↑"
        case movedDown = "↓"
        case inserted = "+"
        case updated = "•"
    }

    /// The database, named last on the title line.
    var title: String
    /// The list the subscription sees ("main", "archive, unread only").
    var view: String
    /// Lines shown under the title (the demo's web pages to open: printed before the watch
    /// takes the screen, they would be hidden while it runs).
    var notes: [String] = []
    private(set) var rows: [Chat] = []
    private var marks: [String: (mark: Mark, at: Int64)] = [:]
    private(set) var isSubscribed = false
    private(set) var seq: Int64 = 0
    private(set) var total = 0
    private(set) var unread = UnreadCounters()
    /// Batches animated (a structural batch and its deferred updates are two).
    private(set) var batches = 0
    /// Reloads: resets, and snapshots that replaced rows already shown.
    private(set) var resets = 0
    /// How long a mark stays.
    static let markMilliseconds: Int64 = 2_000
    /// The fewest terminal rows left beside the notes for them to be shown.
    static let rowsBesideNotes = 10

    init(title: String, view: String = "main", notes: [String] = []) {
        self.title = title
        self.view = view
        self.notes = notes
    }

    /// Shows saved rows until the subscription's first update.
    mutating func show(_ saved: [Chat]) {
        rows = saved
    }

    /// Applies an update of the subscription (already validated by the client) and marks the rows
    /// its batches moved, inserted or changed.
    mutating func apply(_ update: FeedUpdate, now: Int64) {
        switch update.kind {
        case .snapshot, .reset:
            if update.kind == .reset || !rows.isEmpty { resets += 1 }
            marks.removeAll()
        case .batches:
            for step in update.steps {
                for move in step.batch.moves {
                    marks[step.chats[move.to].id] = (move.to < move.from ? .movedUp : .movedDown, now)
                }
                for insert in step.batch.inserts { marks[insert.item.id] = (.inserted, now) }
                // A deferred update right after a move or an insert keeps the stronger mark.
                for update in step.batch.updates where marks[update.item.id].map({ now - $0.at > 300 }) ?? true {
                    marks[update.item.id] = (.updated, now)
                }
                batches += 1
            }
        }
        rows = update.chats
        isSubscribed = true
        seq = update.seq
        total = update.total
        unread = update.unread
    }

    /// Drops the marks older than `markMilliseconds`; true when one went (the frame changes).
    mutating func fadeMarks(now: Int64) -> Bool {
        let faded = marks.filter { now - $0.value.at > Self.markMilliseconds }.keys
        for id in faded { marks[id] = nil }
        return !faded.isEmpty
    }

    /// The frame for a terminal of `size`: a title, the notes, a legend, a column header, then as many rows
    /// as fit (a last line says how many more the window has). Every line fits in `size.columns`
    /// cells, whatever the titles hold (CJK and emoji are measured by `TerminalText.width`).
    func frame(size: TerminalSize, now: Int64) -> [FrameLine] {
        let width = max(1, size.columns)
        let layout = WatchLayout(columns: width)
        let badge = unread.unmutedMessages > 0
            ? "🔴 \(unread.unmutedMessages) unread in \(unread.unmutedChats) chats" : "no unread"
        var lines = [
            FrameLine(
                "chatfeed watch — \(view): \(total) chats, \(badge) — seq \(seq), \(batches) batches, \(resets) resets — \(title)",
                style: .title, width: width),
        ]
        // The notes give way to the rows on a short terminal.
        if size.rows >= notes.count + Self.rowsBesideNotes {
            lines += notes.map { FrameLine($0, style: .legend, width: width) }
        }
        lines += Self.legend(width: width).map { FrameLine($0, style: .legend, width: width) }
        lines.append(FrameLine(layout.header, style: .header, width: width, fill: true))
        let space = size.rows - lines.count
        let shown = rows.count <= space ? rows.count : max(0, space - 1)
        for (index, chat) in rows.prefix(shown).enumerated() {
            let mark = marks[chat.id]?.mark
            lines.append(FrameLine(
                layout.row(chat, index: index, mark: mark?.rawValue ?? " ", now: now), style: mark == nil ? .plain : .marked,
                width: width))
        }
        if shown < rows.count {
            lines.append(FrameLine(
                "… \(rows.count - shown) more rows in the window below; make the terminal taller to see them",
                style: .legend, width: width))
        }
        return lines
    }
}

extension WatchModel {
    static let legendParts = [
        "Unread: messages not read yet", "🔴 badge: unread in chats not muted", "📌 pinned", "🔕 muted",
        "↑↓ moved  + new  • changed",
    ]

    /// The legend in one line, or two on a narrow terminal (the second cut to fit).
    static func legend(width: Int) -> [String] {
        var lines: [String] = []
        for part in legendParts {
            if let last = lines.last, lines.count == 2 || TerminalText.width(last + " · " + part) <= width {
                lines[lines.count - 1] = last + " · " + part
            } else {
                lines.append(part)
            }
        }
        return lines
    }
}

/// A terminal's size in cells.
struct TerminalSize: Hashable {
    var columns: Int
    var rows: Int
}

/// One line of a frame: its text (made safe and cut to the frame's width) and how it is shown.
struct FrameLine: Hashable {
    enum Style: Hashable {
        case plain, title, legend, header, marked

        /// The SGR sequence that starts the style (the line ends with a reset).
        var escape: String {
            switch self {
            case .plain: ""
            case .title, .marked: "\u{1B}[1m"
            case .legend: "\u{1B}[2m"
            case .header: "\u{1B}[7m"
            }
        }
    }

    var text: String
    var style: Style

    /// `text` sanitized and cut to `width` cells; `fill` pads it to exactly `width`.
    init(_ text: String, style: Style, width: Int, fill: Bool = false) {
        let safe = TerminalText.sanitized(text)
        self.text = fill ? TerminalText.padded(safe, toWidth: width) : TerminalText.truncated(safe, toWidth: width)
        self.style = style
    }

    /// The line with its style, as written to an ANSI terminal.
    var styled: String { style == .plain ? text : style.escape + text + "\u{1B}[0m" }
}

/// The columns of the watch for a terminal `columns` cells wide: a mark, the row's index, the
/// flags, the title, the unread count, when, and the last message in the rest.
struct WatchLayout {
    let titleWidth: Int
    let previewWidth: Int
    static let indexWidth = 4
    static let flagsWidth = 4
    static let unreadWidth = 6
    static let whenWidth = 8
    /// Cells of the fixed columns and the spaces between columns.
    static let fixedWidth = 1 + 1 + indexWidth + 1 + flagsWidth + 1 + 1 + unreadWidth + 1 + whenWidth + 1

    init(columns: Int) {
        let rest = max(0, columns - Self.fixedWidth)
        titleWidth = min(28, max(8, rest * 2 / 5))
        previewWidth = max(0, rest - titleWidth)
    }

    var header: String {
        line(mark: " ", index: "row", flags: "", title: "Chat", unread: "Unread", when: "Last", preview: "Last message")
    }

    func row(_ chat: Chat, index: Int, mark: String, now: Int64) -> String {
        line(
            mark: mark, index: "\(index)", flags: (chat.pinned ? "📌" : "  ") + (chat.muted ? "🔕" : "  "),
            title: chat.title, unread: chat.unread > 0 ? "\(chat.unread)" : "",
            when: relativeTime(chat.lastMessageDate, now: now),
            preview: chat.lastMessage.map { "\($0.sender): \($0.text)" } ?? "—")
    }

    private func line(
        mark: String, index: String, flags: String, title: String, unread: String, when: String, preview: String
    ) -> String {
        func cell(_ text: String, _ width: Int, right: Bool = false) -> String {
            TerminalText.padded(TerminalText.sanitized(text), toWidth: width, alignRight: right)
        }
        return [
            cell(mark, 1), cell(index, Self.indexWidth, right: true), cell(flags, Self.flagsWidth), cell(title, titleWidth),
            cell(unread, Self.unreadWidth, right: true), cell(when, Self.whenWidth),
            TerminalText.truncated(TerminalText.sanitized(preview), toWidth: previewWidth),
        ].joined(separator: " ")
    }
}

/// The bytes that take an ANSI terminal from one frame to the next without clearing it: each
/// changed line is rewritten in place and cleared to its end, lines below a shorter frame are
/// cleared. The first frame (no `previous`), and the first after a resize, clear the screen once.
enum ScreenUpdate {
    static func redraw(from previous: [FrameLine]?, to next: [FrameLine]) -> String {
        guard let previous else {
            return "\u{1B}[H\u{1B}[2J" + next.map { $0.styled + "\u{1B}[K" }.joined(separator: "\r\n")
        }
        var output = ""
        for (row, line) in next.enumerated() where row >= previous.count || previous[row] != line {
            output += "\u{1B}[\(row + 1);1H" + line.styled + "\u{1B}[K"
        }
        if next.count < previous.count {
            output += "\u{1B}[\(next.count + 1);1H\u{1B}[J"
        }
        return output
    }
}
