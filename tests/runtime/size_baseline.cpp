// size_probe.cpp without kiln: the same standard-library use (vectors of buffers, an exception
// caught, printf), so that the difference between the two is what the runtime adds.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  try {
    std::vector<std::vector<unsigned char>> buffers;
    std::vector<void*> pointers;
    pointers.push_back(buffers.emplace_back(static_cast<size_t>(argc)).data());
    if (pointers.size() > 5) throw std::runtime_error(std::string(argv[1]) + argv[2]);
    std::printf("%s ran\n", argv[1]);
  } catch (const std::exception& e) {
    std::printf("%s\n", e.what());
    return 1;
  }
  return 0;
}
