// TerminalScreen on ncurses (wide-character build: UTF-8 sparklines).
#include "terminal_screen.hpp"

#include <clocale>
#include <cstdio>
#include <string_view>
#include <utility>

#include <unistd.h>

#define NCURSES_WIDECHAR 1
#include <curses.h>

namespace hwaccel::cli {

struct TerminalScreen::State {
  SCREEN* screen = nullptr;
  bool color = false;
};

namespace {

// Colour pairs by style; 0 is the terminal's default.
constexpr short pair_of(LineStyle style) {
  switch (style) {
    case LineStyle::title: return 1;
    case LineStyle::heading: return 2;
    case LineStyle::warning: return 3;
    case LineStyle::good: return 4;
    default: return 0;
  }
}

attr_t attributes_of(LineStyle style, bool color) {
  switch (style) {
    case LineStyle::title: return A_BOLD | (color ? COLOR_PAIR(pair_of(style)) : A_REVERSE);
    case LineStyle::heading: return A_BOLD | (color ? COLOR_PAIR(pair_of(style)) : 0);
    case LineStyle::selected: return A_REVERSE;
    case LineStyle::warning: return color ? COLOR_PAIR(pair_of(style)) : A_BOLD;
    case LineStyle::good: return color ? COLOR_PAIR(pair_of(style)) : 0;
    case LineStyle::dim: return A_DIM;
    case LineStyle::normal: return A_NORMAL;
  }
  return A_NORMAL;
}

// The bytes of `text` that fill at most `columns` cells (one per code point).
std::size_t bytes_for_columns(std::string_view text, int columns) {
  std::size_t i = 0;
  int used = 0;
  while (i < text.size()) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (used == columns) break;
      ++used;
    }
    ++i;
  }
  return i;
}

}  // namespace

TerminalScreen::TerminalScreen(std::unique_ptr<State> state) : state_(std::move(state)) {}

std::unique_ptr<TerminalScreen> TerminalScreen::open(bool color, std::string& error) {
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
    error = "standard input and output are not a terminal (use --once or --json in scripts)";
    return nullptr;
  }
  // Only the character type: numbers keep the C locale's decimal point.
  std::setlocale(LC_CTYPE, "");
  auto state = std::make_unique<State>();
  state->screen = newterm(nullptr, stdout, stdin);
  if (!state->screen) {
    error = "the terminal type ($TERM) is unknown to terminfo";
    return nullptr;
  }
  set_term(state->screen);
  // Raw: Ctrl-C arrives as a key, so that the terminal is restored on the way out.
  raw();
  noecho();
  set_escdelay(25);
  nonl();
  intrflush(stdscr, FALSE);
  keypad(stdscr, TRUE);
  curs_set(0);
  if (color && has_colors()) {
    start_color();
    use_default_colors();
    init_pair(1, COLOR_CYAN, -1);
    init_pair(2, COLOR_YELLOW, -1);
    init_pair(3, COLOR_RED, -1);
    init_pair(4, COLOR_GREEN, -1);
    state->color = true;
  }
  return std::unique_ptr<TerminalScreen>(new TerminalScreen(std::move(state)));
}

TerminalScreen::~TerminalScreen() {
  if (state_ && state_->screen) {
    endwin();
    delscreen(state_->screen);
  }
}

int TerminalScreen::rows() const { return LINES; }
int TerminalScreen::columns() const { return COLS; }

void TerminalScreen::draw(const std::vector<ScreenLine>& lines) {
  werase(stdscr);
  const int rows = LINES;
  for (int y = 0; y < rows && y < static_cast<int>(lines.size()); ++y) {
    const ScreenLine& line = lines[static_cast<std::size_t>(y)];
    const attr_t attrs = attributes_of(line.style, state_->color);
    wattrset(stdscr, static_cast<int>(attrs));
    const std::size_t n = bytes_for_columns(line.text, COLS);
    mvwaddnstr(stdscr, y, 0, line.text.data(), static_cast<int>(n));
    // A selected or title row is highlighted across the screen.
    if (line.style == LineStyle::selected || line.style == LineStyle::title) {
      int cy = 0, cx = 0;
      getyx(stdscr, cy, cx);
      if (cy == y)
        for (int x = cx; x < COLS; ++x) waddch(stdscr, ' ');
    }
    wattrset(stdscr, A_NORMAL);
  }
  wnoutrefresh(stdscr);
  doupdate();
}

ScreenKey TerminalScreen::next_key(std::chrono::milliseconds wait) {
  wtimeout(stdscr, static_cast<int>(wait.count() < 0 ? 0 : wait.count()));
  wint_t c = 0;
  const int got = wget_wch(stdscr, &c);
  ScreenKey key;
  if (got == ERR) return key;
  if (got == KEY_CODE_YES) {
    switch (c) {
      case KEY_UP: key.kind = ScreenKey::up; break;
      case KEY_DOWN: key.kind = ScreenKey::down; break;
      case KEY_PPAGE: key.kind = ScreenKey::page_up; break;
      case KEY_NPAGE: key.kind = ScreenKey::page_down; break;
      case KEY_HOME: key.kind = ScreenKey::home; break;
      case KEY_END: key.kind = ScreenKey::end; break;
      case KEY_ENTER: key.kind = ScreenKey::enter; break;
      case KEY_BACKSPACE: key.kind = ScreenKey::backspace; break;
      case KEY_RESIZE: key.kind = ScreenKey::resize; break;
      default: break;
    }
    return key;
  }
  if (c == 3 || c == 4) key.kind = ScreenKey::interrupt;  // Ctrl-C, Ctrl-D
  else if (c == '\r' || c == '\n') key.kind = ScreenKey::enter;
  else if (c == 27) key.kind = ScreenKey::escape;
  else if (c == 127 || c == 8) key.kind = ScreenKey::backspace;
  else if (c >= 32) {
    key.kind = ScreenKey::typed;
    key.character = static_cast<char32_t>(c);
  }
  return key;
}

}  // namespace hwaccel::cli
