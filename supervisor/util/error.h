#pragma once
// Recoverable errors are values: Error says where (file:line:column, any part optional) and what.
#include <expected>
#include <string>

namespace mlsup::util {

// What kind of failure, where a caller must tell kinds apart (never by matching the message).
enum class ErrorKind {
  Other,
  Held,        // another holder has it now
  Busy,        // contended for a moment: try again soon
  Superseded,  // this holder's claim was taken over: stop acting
  Config,      // the config's doing, found only when the campaign opens: exit 3, as where a load finds it
};

struct Error {
  ErrorKind kind = ErrorKind::Other;
  std::string file;     // config or template path; "" when not about a file
  int line = 0;         // 1-based; 0 when unknown
  int column = 0;       // 1-based; 0 when unknown
  std::string subject;  // the key or variable the message is about; may be ""
  std::string message;  // what is wrong, and what to do when that is known

  // "file:line:column: subject: message", leaving out the parts that are unknown.
  std::string str() const;
};

template <typename T>
using Result = std::expected<T, Error>;

// An Error with only a message.
inline std::unexpected<Error> fail(std::string message) { return std::unexpected(Error{.message = std::move(message)}); }

}  // namespace mlsup::util
