% Octave oracle for the multilabel labeller's `matlab` and `size` orders: bwlabeln on every class's mask,
% the components of all classes merged by their minimum MATLAB key (the linear index into V(y,x,z), where
% bwlabeln numbers a binary volume by the same key), or for `size` by voxel count with ties by that key.
% Random class maps (2 to 200 classes in blobs that touch, odd shapes), made here from the seed.
% usage: octave-cli --no-gui -q multilabel_octave.m TOOL WORKDIR SEED
pkg load image
args = argv();
tool = args{1}; work = args{2}; seed = str2double(args{3});
rand('seed', seed); randn('seed', seed);
checked = 0; failed = 0;
function write_raw(path, v, type)
  fid = fopen(path, 'wb'); fwrite(fid, v, type); fclose(fid);
end
function v = read_raw(path, type, n)
  fid = fopen(path, 'rb'); v = fread(fid, n, [type '=>' type]); fclose(fid);
end
for k = 1:24
  dims = 1 + floor(rand(1, 3) .* [26 22 14]);           % x, y, z
  classes = 2 + floor(rand() * 199);
  values = 1 + floor(rand(1, classes) * 60000);
  cell_size = 1 + floor(rand() * 5);
  coarse = ceil(dims / cell_size);
  grid = reshape(values(1 + floor(rand(coarse) * classes)), coarse);  % a vector-shaped index keeps values' shape
  grid(rand(coarse) < 0.2) = 0;
  [gx, gy, gz] = ndgrid(1:dims(1), 1:dims(2), 1:dims(3));
  raw = grid(sub2ind(coarse, ceil(gx / cell_size), ceil(gy / cell_size), ceil(gz / cell_size)));
  noise = rand(dims) < rand() * 0.3;
  raw(noise) = values(1 + floor(rand(nnz(noise), 1) * classes));
  raw = uint16(reshape(raw, dims));                       % raw(x,y,z), x fastest on disk
  write_raw(fullfile(work, 'map.raw'), raw, 'uint16');
  image = permute(raw, [2 1 3]);                          % image(y,x,z): the MATLAB key is its linear index
  n = numel(raw);
  for conn = [6 18 26]
    for order = {'matlab', 'size'}
      status = system(sprintf('"%s" "%s" %d %d %d u16 %d %s cpu "%s" > /dev/null', tool, fullfile(work, 'map.raw'), ...
                              dims(1), dims(2), dims(3), conn, order{1}, fullfile(work, 'out')));
      if status ~= 0
        error('multilabel_tool failed on map %d', k);
      end
      ours = permute(reshape(read_raw(fullfile(work, 'out.labels'), 'uint32', n), dims), [2 1 3]);
      % Every class's components with their minimum key and size.
      keys = []; sizes = []; pieces = zeros(size(image));
      present = unique(image(image > 0));
      for c = present(:)'                               % a row image gives a row of classes: one class a turn
        L = bwlabeln(image == c, conn);
        idx = find(L(:));
        lab = L(idx);
        lab = lab(:);                                    % columns, whatever the volume's shape
        count = max(L(:));
        keys = [keys; accumarray(lab, idx, [count 1], @min)];
        sizes = [sizes; accumarray(lab, 1, [count 1])];
        pieces(idx) = lab + numel(keys) - count;
      end
      if strcmp(order{1}, 'matlab')
        [~, rank] = sort(keys);
      else
        [~, rank] = sortrows([-sizes keys]);
      end
      final = zeros(numel(keys), 1); final(rank) = 1:numel(keys);
      expected = zeros(size(image));
      expected(pieces > 0) = final(pieces(pieces > 0));
      checked++;
      if ~isequal(double(ours), expected)
        failed++;
        printf('MISMATCH map %d (%dx%dx%d, %d classes) conn %d order %s: %d voxels differ\n', k, dims(1), ...
               dims(2), dims(3), classes, conn, order{1}, nnz(double(ours) ~= expected));
      end
    end
  end
end
printf('octave bwlabeln per-class oracle: %d labellings compared, %d mismatches\n', checked, failed);
if failed > 0
  error('multilabel bwlabeln oracle: %d of %d labellings differ', failed, checked);
end
