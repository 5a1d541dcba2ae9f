import Foundation

/// The watch's terminal: its size, the alternate screen, and frames written as
/// `ScreenUpdate` says. When stdout is not a terminal (a pipe, a file), frames are written one
/// after the other as plain lines, with an empty line after each.
struct TerminalOutput {
    let isInteractive = isatty(STDOUT_FILENO) != 0

    /// The size from the terminal (`TIOCGWINSZ`), else from `$COLUMNS` and `$LINES`, else 100 × 24.
    func size() -> TerminalSize {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0, size.ws_col > 0 {
            return TerminalSize(columns: Int(size.ws_col), rows: Int(size.ws_row))
        }
        let environment = ProcessInfo.processInfo.environment
        return TerminalSize(
            columns: environment["COLUMNS"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil } ?? 100,
            rows: isInteractive ? environment["LINES"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil } ?? 24 : Int.max / 2)
    }

    /// Switches to the alternate screen and hides the cursor (a terminal only).
    func enter() {
        if isInteractive { write("\u{1B}[?1049h\u{1B}[?25l") }
    }

    /// Shows the cursor and goes back to the screen as it was before the watch.
    func leave() {
        if isInteractive { write("\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l") }
    }

    /// Draws `frame` over `previous` (nil: on a cleared screen); returns what is now drawn.
    func draw(_ frame: [FrameLine], over previous: [FrameLine]?) -> [FrameLine] {
        if isInteractive {
            write(ScreenUpdate.redraw(from: previous, to: frame))
        } else {
            write(frame.map(\.text).joined(separator: "\n") + "\n\n")
        }
        return frame
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// Flags set by signal handlers and polled by the watch's loop: SIGINT and SIGTERM stop it (so
/// that it leaves the alternate screen and stops the daemon cleanly), SIGWINCH redraws at the new size.
enum Signals {
    nonisolated(unsafe) static var interrupted = SignalFlag()
    nonisolated(unsafe) static var resized = SignalFlag()

    static func install() {
        signal(SIGINT) { _ in Signals.interrupted.set() }
        signal(SIGTERM) { _ in Signals.interrupted.set() }
        signal(SIGWINCH) { _ in Signals.resized.set() }
    }
}

/// A flag set from a signal handler.
struct SignalFlag {
    private var value: sig_atomic_t = 0
    mutating func set() { value = 1 }
    func load() -> Bool { value != 0 }

    /// True when set since the last take; clears it.
    mutating func take() -> Bool {
        defer { value = 0 }
        return value != 0
    }
}
