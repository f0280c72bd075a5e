#pragma once
// One question to Slurm from a read-only verb, with a deadline: it runs on a thread of its own, and one that
// outlives the deadline is left to finish alone.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "slurm/client.h"
#include "slurm/config_check.h"

namespace mlsup::cli {

// ask(client)'s answer from a client of backend; an error at once when Slurm's configuration cannot be read or
// the backend is missing, and when it did not answer within deadline seconds.
template <class T, class Ask>
slurm::Result<T> ask_slurm(const std::string& backend, double deadline, Ask ask) {
  using Answer = slurm::Result<T>;
  if (const auto problem = slurm::config_problem()) return std::unexpected(slurm::Error{.message = *problem});
  struct Shared {
    std::mutex mutex;
    std::condition_variable done;
    std::optional<Answer> answer;
  };
  auto shared = std::make_shared<Shared>();
  std::thread([shared, backend, ask = std::move(ask)] {
    auto client = slurm::make_client(backend);
    Answer answer = client ? ask(*client) : Answer(std::unexpected(slurm::Error{.message = "no Slurm backend " + backend}));
    std::lock_guard lock(shared->mutex);
    shared->answer = std::move(answer);
    shared->done.notify_all();
  }).detach();
  std::unique_lock lock(shared->mutex);
  if (!shared->done.wait_for(lock, std::chrono::duration<double>(deadline), [&] { return shared->answer.has_value(); }))
    return std::unexpected(slurm::Error{.message = "Slurm did not answer within " + std::to_string(static_cast<int>(deadline)) + "s"});
  return std::move(*shared->answer);
}

}  // namespace mlsup::cli
