import ChatModel

/// Left-aligned columns separated by two spaces, padded by display width (CJK and emoji take two
/// cells); cells are made safe for a terminal and cut beyond `maxCellWidth` cells.
struct TextTable {
    var headers: [String]
    var rows: [[String]] = []
    var maxCellWidth = 40

    init(headers: [String]) { self.headers = headers }

    mutating func append(_ row: [String]) { rows.append(row) }

    func render() -> String {
        let cells = ([headers] + rows).map { $0.map { fit($0) } }
        let widths = headers.indices.map { column in cells.map { TerminalText.width($0[column]) }.max() ?? 0 }
        return cells.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : TerminalText.padded(cell, toWidth: widths[column])
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// The cell made safe for a terminal (`TerminalText.sanitized`), cut to `maxCellWidth` cells.
    private func fit(_ cell: String) -> String {
        TerminalText.truncated(TerminalText.sanitized(cell), toWidth: maxCellWidth)
    }
}

/// "just now", "42s ago", "3m ago", "5h ago", "2d ago", or "in 3m" for a time in the future.
func relativeTime(_ milliseconds: Int64, now: Int64) -> String {
    let seconds = (now - milliseconds) / 1000
    let magnitude = abs(seconds)
    let amount: String
    switch magnitude {
    case 0..<5: return "just now"
    case 5..<60: amount = "\(magnitude)s"
    case 60..<3600: amount = "\(magnitude / 60)m"
    case 3600..<86_400: amount = "\(magnitude / 3600)h"
    case 86_400..<(365 * 86_400): amount = "\(magnitude / 86_400)d"
    default: amount = "\(magnitude / (365 * 86_400))y"
    }
    return seconds >= 0 ? "\(amount) ago" : "in \(amount)"
}
