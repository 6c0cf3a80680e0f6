// A full-screen terminal for `hwaccel top`: ncurses behind an interface of
// plain lines and keys. Its implementation (terminal_screen.cpp) is a
// translation unit of its own: <curses.h> defines macros (erase, clear,
// timeout, refresh...) that must not reach the rest of the CLI.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hwaccel::cli {

/// How a line is drawn. Without colour (NO_COLOR, a monochrome terminal)
/// styles become bold, reverse video and dim.
enum class LineStyle { normal, title, heading, selected, warning, good, dim };

struct ScreenLine {
  std::string text;  ///< UTF-8, no control characters
  LineStyle style = LineStyle::normal;
};

/// A key, or what happened instead of one.
struct ScreenKey {
  enum Kind { none, typed, up, down, page_up, page_down, home, end, enter, escape, backspace, resize, interrupt } kind = none;
  char32_t character = 0;  ///< for Kind::typed
};

class TerminalScreen {
 public:
  /// Takes over the terminal on stdin/stdout; nullptr with `error` set when
  /// there is none (not a tty, no terminfo entry for $TERM).
  static std::unique_ptr<TerminalScreen> open(bool color, std::string& error);
  ~TerminalScreen();  ///< gives the terminal back as it was
  TerminalScreen(const TerminalScreen&) = delete;
  TerminalScreen& operator=(const TerminalScreen&) = delete;

  int rows() const;
  int columns() const;
  /// Replaces what is on screen; lines beyond the screen are not drawn, long
  /// lines are cut at the right edge.
  void draw(const std::vector<ScreenLine>& lines);
  /// The next key, waiting at most `wait` (none when it passes).
  ScreenKey next_key(std::chrono::milliseconds wait);

  struct State;

 private:
  explicit TerminalScreen(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace hwaccel::cli
