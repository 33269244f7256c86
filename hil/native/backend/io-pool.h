// A small fixed pool of threads (the file tier's I/O; the host backend's kernel parts). run(n, fn) calls fn(0..n-1) across the pool and
// returns when all have finished, rethrowing the first exception.
#pragma once
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hil {

class IoPool {
 public:
  explicit IoPool(int threads) {
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { loop(); });
  }
  ~IoPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int size() const { return static_cast<int>(workers_.size()); }

  void run(size_t n, const std::function<void(size_t)>& fn) {
    struct Batch {
      std::mutex mu;
      std::condition_variable cv;
      size_t left;
      std::exception_ptr error;
    } batch;
    batch.left = n;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (size_t i = 0; i < n; ++i) {
        tasks_.push_back([&batch, &fn, i] {
          std::exception_ptr err;
          try {
            fn(i);
          } catch (...) {
            err = std::current_exception();
          }
          std::lock_guard<std::mutex> l(batch.mu);
          if (err && !batch.error) batch.error = err;
          if (--batch.left == 0) batch.cv.notify_all();
        });
      }
    }
    cv_.notify_all();
    std::unique_lock<std::mutex> lock(batch.mu);
    batch.cv.wait(lock, [&] { return batch.left == 0; });
    if (batch.error) std::rethrow_exception(batch.error);
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      auto task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace hil
